/**
 * Opt-outs belong to the e-mail address (12 CFR 1006.6(e): "to that address"; §1006.14(h): a
 * medium the person asked to stop), per organization and environment, compared trimmed and in
 * lower case. One row holds an address's state, and every change is appended to its history
 * (the table refuses UPDATE and DELETE). Each customer record with the address carries the
 * state as its `communication_preferences` (set here for those present, read at creation and
 * at a change of `email` for those to come), so the customer, its payloads and the sending
 * rule all read one answer.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import type { CustomerRow } from '../customer-store/customer-repo';

export type ChangedBy = NonNullable<CustomerRow['email_preference_changed_by']>;

export const normalizedAddress = (email: string): string => email.trim().toLowerCase();

export type Preference = Pick<CustomerRow, 'email_preference' | 'email_preference_changed_at' | 'email_preference_changed_by'>;

const NEVER_CHANGED: Preference = { email_preference: 'allowed', email_preference_changed_at: null, email_preference_changed_by: null };

interface OptOutRow {
  opted_out: boolean;
  changed_by: ChangedBy;
  changed_at: Date;
}

export interface HistoryRow {
  address: string;
  opted_out: boolean;
  changed_by: ChangedBy;
  customer_id: string | null;
  changed_at: Date;
}

const tenantOf = (tenant: Tenant) => ({ organization_id: tenant.organizationId, environment: tenant.environment });

/** The state of `email` in the tenant, as a customer's preference columns read it. */
export async function preferenceOf(db: Knex, tenant: Tenant, email: string): Promise<Preference> {
  const row = (await db('email_opt_outs').where({ ...tenantOf(tenant), address: normalizedAddress(email) }).first('opted_out', 'changed_by', 'changed_at')) as OptOutRow | undefined;
  if (!row) return NEVER_CHANGED;
  return { email_preference: row.opted_out ? 'opted_out' : 'allowed', email_preference_changed_at: row.changed_at, email_preference_changed_by: row.changed_by };
}

export async function isOptedOut(db: Knex, tenant: Tenant, email: string): Promise<boolean> {
  return (await preferenceOf(db, tenant, email)).email_preference === 'opted_out';
}

/**
 * Sets the state of `email` (locking its row for the rest of `trx`), appends the change to the
 * history and to every customer record with the address. Writing the state it already has
 * changes nothing. Answers the customers changed (for their `customer.update`).
 */
export async function setAddressPreference(
  trx: Knex,
  tenant: Tenant,
  change: { email: string; optedOut: boolean; by: ChangedBy; customerId: string | null; now: Date },
): Promise<string[]> {
  const address = normalizedAddress(change.email);
  const current = (await trx('email_opt_outs').where({ ...tenantOf(tenant), address }).forUpdate().first('opted_out')) as Pick<OptOutRow, 'opted_out'> | undefined;
  if ((current?.opted_out ?? false) === change.optedOut) return [];
  const values = { opted_out: change.optedOut, changed_by: change.by, changed_at: change.now };
  await trx('email_opt_outs').insert({ ...tenantOf(tenant), address, ...values }).onConflict(['organization_id', 'environment', 'address']).merge(values);
  await trx('email_opt_out_history').insert({ ...tenantOf(tenant), address, ...values, customer_id: change.customerId });
  const rows = (await trx('customers')
    .where(tenantOf(tenant))
    .whereRaw('lower(btrim(email)) = ?', [address])
    .update({
      email_preference: change.optedOut ? 'opted_out' : 'allowed',
      email_preference_changed_at: change.now,
      email_preference_changed_by: change.by,
      updated_at: trx.fn.now(),
    })
    .returning('id')) as { id: string }[];
  return rows.map((row) => row.id);
}

/** Every change of `email`'s state, oldest first. */
export async function historyOf(db: Knex, tenant: Tenant, email: string): Promise<HistoryRow[]> {
  return db('email_opt_out_history')
    .where({ ...tenantOf(tenant), address: normalizedAddress(email) })
    .orderBy('id')
    .select('address', 'opted_out', 'changed_by', 'customer_id', 'changed_at');
}
