import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, whereIdOrExternalId, externalIdTaken } from '../db/tenant';

export const CUSTOMERS = 'customers';
export const CUSTOMER_COLUMNS = [
  'id',
  'external_id',
  'name',
  'email',
  'email_source',
  'email_work_address',
  'email_creditor_notice_date',
  'phone',
  'date_of_birth',
  'ssn_last4',
  'metadata',
  'time_zone',
  'email_preference',
  'email_preference_changed_at',
  'email_preference_changed_by',
  'created_at',
  'updated_at',
].map((column) => `${CUSTOMERS}.${column}`);

export interface CustomerRow {
  id: string;
  external_id: string | null;
  name: string;
  email: string;
  email_source: 'creditor' | 'debtor' | 'skip_trace' | 'other';
  email_work_address: boolean;
  email_creditor_notice_date: string | null;
  phone: string | null;
  date_of_birth: string | null;
  ssn_last4: string | null;
  metadata: Record<string, string>;
  time_zone: string | null;
  email_preference: 'allowed' | 'opted_out';
  email_preference_changed_at: Date | null;
  email_preference_changed_by: 'api' | 'link' | 'portal' | null;
  created_at: Date;
  updated_at: Date;
}

export type CustomerValues = Partial<Omit<CustomerRow, 'id' | 'created_at' | 'updated_at'>>;

export function customerRepo(db: Knex, tenant: Tenant) {
  const customers = () => scoped(db, CUSTOMERS, tenant);
  return {
    query: customers,

    /** By id or external_id; `forUpdate` locks the row for the rest of the transaction. */
    async find(key: string, { forUpdate = false } = {}): Promise<CustomerRow | undefined> {
      const query = whereIdOrExternalId(customers(), CUSTOMERS, key).first(CUSTOMER_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<CustomerRow | undefined>;
    },

    async findMany(ids: string[]): Promise<CustomerRow[]> {
      if (ids.length === 0) return [];
      return customers().whereIn(`${CUSTOMERS}.id`, ids).select(CUSTOMER_COLUMNS);
    },

    externalIdTaken: (externalId: string, exceptId?: string) => externalIdTaken(customers(), externalId, exceptId),

    async insert(values: CustomerValues): Promise<CustomerRow> {
      const [row] = await db(CUSTOMERS)
        .insert({ ...values, metadata: JSON.stringify(values.metadata ?? {}), ...tenantColumns(tenant) })
        .returning(CUSTOMER_COLUMNS);
      return row as CustomerRow;
    },

    async update(id: string, values: CustomerValues): Promise<CustomerRow> {
      const changes = { ...values, updated_at: db.fn.now() } as Record<string, unknown>;
      if (values.metadata) changes.metadata = JSON.stringify(values.metadata);
      const [row] = await customers().where('id', id).update(changes).returning(CUSTOMER_COLUMNS);
      return row as CustomerRow;
    },

    async delete(id: string): Promise<void> {
      await customers().where('id', id).delete();
    },
  };
}
