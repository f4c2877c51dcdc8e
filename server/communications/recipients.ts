/** The communications log's read model of a customer: where and when they may be e-mailed. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';

export interface Recipient {
  id: string;
  name: string;
  email: string;
  time_zone: string | null;
  email_preference: 'allowed' | 'opted_out';
  /** Of the primary address, for the time zone of a customer without their own. */
  postal_code: string | null;
}

export async function recipientOf(db: Knex, tenant: Tenant, customerId: string, { forUpdate = false } = {}): Promise<Recipient | undefined> {
  const query = db('customers AS c')
    .leftJoin('customer_addresses AS a', (join) => join.on('a.customer_id', 'c.id').andOnVal('a.is_primary', true))
    .where({ 'c.id': customerId, 'c.organization_id': tenant.organizationId, 'c.environment': tenant.environment })
    .first('c.id', 'c.name', 'c.email', 'c.time_zone', 'c.email_preference', 'a.postal_code');
  return (forUpdate ? query.forUpdate('c') : query) as Promise<Recipient | undefined>;
}
