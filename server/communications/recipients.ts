/** The communications log's read model of a customer: where and when they may be e-mailed. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { isOptedOut, normalizedAddress } from '../customers/email-opt-outs';

export interface Recipient {
  id: string;
  name: string;
  email: string;
  time_zone: string | null;
  phone: string | null;
  /** A known work address: nothing is sent to it (12 CFR 1006.22(f)(3)). */
  email_work_address: boolean;
  /** Of every address, the primary's first: each is a location the customer may be in. */
  postal_codes: string[];
}

export async function recipientOf(db: Knex, tenant: Tenant, customerId: string): Promise<Recipient | undefined> {
  const customer = (await db('customers')
    .where({ id: customerId, organization_id: tenant.organizationId, environment: tenant.environment })
    .first('id', 'name', 'email', 'time_zone', 'phone', 'email_work_address')) as Omit<Recipient, 'postal_codes'> | undefined;
  if (!customer) return undefined;
  const addresses = (await db('customer_addresses')
    .where({ customer_id: customerId })
    .orderBy([{ column: 'is_primary', order: 'desc' }, { column: 'created_at' }, { column: 'id' }])
    .select('postal_code')) as { postal_code: string | null }[];
  return { ...customer, postal_codes: addresses.flatMap((address) => (address.postal_code ? [address.postal_code] : [])) };
}

export type Barred = 'work_address' | 'opted_out' | undefined;

/**
 * Why `to` may not receive an agency-initiated message now: a known work address of the
 * customer (§1006.22(f)(3)), or an address opted out (§1006.6(e), for every customer record
 * with it).
 */
export async function barredAddress(db: Knex, tenant: Tenant, recipient: Recipient, to: string): Promise<Barred> {
  if (recipient.email_work_address && normalizedAddress(to) === normalizedAddress(recipient.email)) return 'work_address';
  return (await isOptedOut(db, tenant, to)) ? 'opted_out' : undefined;
}
