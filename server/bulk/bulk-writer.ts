/**
 * Writes the rows of one chunk that passed the rules: one COPY per table, ids made here so that
 * no answer of the database has to be matched back to its row, and every row's outcome marked
 * in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';
import { ADDRESSES } from '../customer-store/address-repo';
import { CUSTOMERS } from '../customer-store/customer-repo';
import { DEBT_ACCOUNTS } from '../debt-accounts/debt-account-repo';
import { sortBillingTypes } from '../kernel/billing-types';
import { itemizationOf } from '../debt-accounts/itemization';
import { insertOrGetLocations, LOCATIONS } from '../locations/location-repo';
import { scoped } from '../db/tenant';
import { copyRows } from '../db/copy-rows';
import { parentIds, type BulkItem, type PendingRow, type RowErrors } from './bulk-rows';

type Account = NonNullable<BulkItem['debt_accounts']>[number] | NonNullable<BulkItem['parent_debt_accounts']>[number];

export interface Written {
  customerIds: string[];
  accounts: { id: string; customer_id: string; parent_id: string | null }[];
  locationIds: string[];
}

function withDefaults(itemization: NonNullable<NonNullable<BulkItem['debt_accounts']>[number]['itemization']>) {
  const checked = itemizationOf(itemization, '9999-12-31');
  return 'value' in checked ? checked.value : null;
}

function accountRow(account: Account, ids: { id: string; customer: string; location: string; parent: string | null }, tenant: Tenant) {
  return {
    id: ids.id,
    ...tenantColumns(tenant),
    customer_id: ids.customer,
    location_id: ids.location,
    parent_id: ids.parent,
    external_id: account.external_id ?? null,
    external_account_number: account.external_account_number ?? null,
    billing_type: account.billing_type ? sortBillingTypes(account.billing_type) : null,
    balance: account.balance,
    current_balance: account.current_balance ?? account.balance,
    metadata: account.metadata ?? {},
    validation_notice_sent_at: ('validation_notice_sent_at' in account ? account.validation_notice_sent_at : null) ?? null,
    // The date was checked when the request arrived (bulk-service.ts); here only the defaults are filled in.
    itemization: 'itemization' in account && account.itemization ? withDefaults(account.itemization) : null,
  };
}

export async function writeRows(
  trx: Knex.Transaction,
  tenant: Tenant,
  bulkActionId: string,
  rows: PendingRow[],
  failures: Map<number, RowErrors>,
): Promise<Written> {
  const passing = rows.filter((row) => !failures.has(row.position));
  const locationKeys = passing.flatMap((row) => (row.payload.location?.external_id ? [row.payload.location.external_id] : []));
  const known = locationKeys.length
    ? await scoped(trx, LOCATIONS, tenant).whereIn('external_id', locationKeys).select<{ id: string; external_id: string }[]>('id', 'external_id')
    : [];
  const locationByKey = new Map(known.map((location) => [location.external_id, location.id]));

  const customers: Record<string, unknown>[] = [];
  const addresses: Record<string, unknown>[] = [];
  const locations: Record<string, unknown>[] = [];
  const accounts: Record<string, unknown>[] = [];
  for (const { payload } of passing) {
    const customerId = randomUUID();
    const { customer } = payload;
    customers.push({
      id: customerId,
      ...tenantColumns(tenant),
      external_id: customer.external_id ?? null,
      name: customer.name,
      email: customer.email,
      email_source: customer.email_source ?? 'other',
      email_work_address: customer.email_work_address ?? false,
      email_creditor_notice_date: customer.email_creditor_notice_date ?? null,
      phone: customer.phone ?? null,
      date_of_birth: customer.date_of_birth ?? null,
      ssn_last4: typeof customer.ssn_last4 === 'number' ? String(customer.ssn_last4).padStart(4, '0') : (customer.ssn_last4 ?? null),
      metadata: customer.metadata ?? {},
    });
    if (customer.address) {
      // Every row names every column: COPY takes one column list for all of them.
      const { name = null, line1 = null, line2 = null, city = null, state = null, country = null, postal_code } = customer.address;
      addresses.push({ ...tenantColumns(tenant), customer_id: customerId, name, line1, line2, city, state, country, postal_code, is_primary: true });
    }

    const all: Account[] = [...(payload.parent_debt_accounts ?? []), ...(payload.debt_accounts ?? [])];
    if (all.length === 0 || !payload.location) continue;
    let locationId = payload.location.external_id ? locationByKey.get(payload.location.external_id) : undefined;
    if (!locationId) {
      locationId = randomUUID();
      locations.push({ id: locationId, ...tenantColumns(tenant), external_id: payload.location.external_id ?? null, name: payload.location.name, type: 'original_creditor' });
      if (payload.location.external_id) locationByKey.set(payload.location.external_id, locationId);
    }

    // Parents (explicit, or implicit: named by a child) first, with the sums of their children.
    const named = parentIds(payload);
    const children = (payload.debt_accounts ?? []).filter((account) => account.parent_external_id);
    const parentIdByKey = new Map<string, string>();
    for (const account of all) {
      if (!account.external_id || !named.has(account.external_id) || ('parent_external_id' in account && account.parent_external_id)) continue;
      const own = children.filter((child) => child.parent_external_id === account.external_id);
      const id = randomUUID();
      parentIdByKey.set(account.external_id, id);
      const row = accountRow(account, { id, customer: customerId, location: locationId, parent: null }, tenant);
      if (own.length > 0) {
        row.balance = own.reduce((sum, child) => sum + child.balance, 0);
        row.current_balance = own.reduce((sum, child) => sum + (child.current_balance ?? child.balance), 0);
      }
      accounts.push(row);
    }
    for (const account of all) {
      if (account.external_id && parentIdByKey.has(account.external_id)) continue;
      const parent = 'parent_external_id' in account && account.parent_external_id ? parentIdByKey.get(account.parent_external_id)! : null;
      accounts.push(accountRow(account, { id: randomUUID(), customer: customerId, location: locationId, parent }, tenant));
    }
  }

  // A location another request made meanwhile is used, not made twice (its unique key decides).
  const placed = await insertOrGetLocations(trx, tenant, locations as { id: string; external_id: string | null; name: string }[]);
  for (const account of accounts) account.location_id = placed.idOf.get(account.location_id as string) ?? account.location_id;
  await copyRows(trx, CUSTOMERS, customers);
  // An address opted out before (on another customer record) stays opted out (12 CFR 1006.6(e)).
  if (customers.length > 0) {
    await trx.raw(
      `UPDATE ${CUSTOMERS} c SET email_preference = 'opted_out', email_preference_changed_at = o.changed_at, email_preference_changed_by = o.changed_by
         FROM email_opt_outs o
        WHERE c.id = ANY(?::uuid[]) AND o.organization_id = c.organization_id AND o.environment = c.environment
          AND o.address = lower(btrim(c.email)) AND o.opted_out`,
      [customers.map((customer) => customer.id as string)],
    );
  }
  await copyRows(trx, ADDRESSES, addresses);
  // Parents precede their children in `accounts`, and one COPY checks its foreign keys at its end.
  await copyRows(trx, DEBT_ACCOUNTS, accounts);

  const positions = rows.map((row) => row.position);
  // '' for a row that passed: knex binds no nulls inside arrays, so SQL turns it back into NULL.
  const outcomes = rows.map((row) => (failures.has(row.position) ? JSON.stringify(failures.get(row.position)) : ''));
  await trx.raw(
    `UPDATE bulk_rows AS r
        SET status = CASE WHEN o.errors = '' THEN 'created' ELSE 'failed' END,
            errors = NULLIF(o.errors, '')::jsonb, processed_at = now()
       FROM unnest(?::int[], ?::text[]) AS o(position, errors)
      WHERE r.bulk_action_id = ? AND r.position = o.position`,
    [positions, outcomes, bulkActionId],
  );
  return {
    customerIds: customers.map((c) => c.id as string),
    accounts: accounts.map((a) => ({ id: a.id as string, customer_id: a.customer_id as string, parent_id: a.parent_id as string | null })),
    locationIds: placed.created,
  };
}
