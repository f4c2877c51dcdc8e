import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, UUID } from '../db/tenant';

export const ADDRESSES = 'customer_addresses';
export const ADDRESS_COLUMNS = [
  'id',
  'customer_id',
  'name',
  'line1',
  'line2',
  'city',
  'state',
  'country',
  'postal_code',
  'is_primary',
  'created_at',
  'updated_at',
];

export interface AddressRow {
  id: string;
  customer_id: string;
  name: string | null;
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  postal_code: string;
  is_primary: boolean;
  created_at: Date;
  updated_at: Date;
}

export type AddressValues = Partial<Omit<AddressRow, 'id' | 'customer_id' | 'created_at' | 'updated_at'>>;

/** Oldest first: the order of lists, and the one that decides which address is promoted. */
const OLDEST_FIRST = [
  { column: 'created_at', order: 'asc' as const },
  { column: 'id', order: 'asc' as const },
];

export function addressRepo(db: Knex, tenant: Tenant) {
  const addresses = () => scoped(db, ADDRESSES, tenant);
  return {
    async forCustomers(customerIds: string[]): Promise<AddressRow[]> {
      if (customerIds.length === 0) return [];
      return addresses().whereIn('customer_id', customerIds).orderBy(OLDEST_FIRST).select(ADDRESS_COLUMNS);
    },

    async find(customerId: string, id: string): Promise<AddressRow | undefined> {
      if (!UUID.test(id)) return undefined;
      return addresses().where({ customer_id: customerId, id }).first(ADDRESS_COLUMNS);
    },

    async count(customerId: string): Promise<number> {
      const [row] = await addresses().where({ customer_id: customerId }).count<{ count: string }[]>({ count: '*' });
      return Number(row?.count ?? 0);
    },

    async insert(customerId: string, values: AddressValues): Promise<AddressRow> {
      const [row] = await db(ADDRESSES)
        .insert({ ...values, customer_id: customerId, ...tenantColumns(tenant) })
        .returning(ADDRESS_COLUMNS);
      return row as AddressRow;
    },

    async update(id: string, values: AddressValues): Promise<AddressRow> {
      const [row] = await addresses()
        .where({ id })
        .update({ ...values, updated_at: db.fn.now() })
        .returning(ADDRESS_COLUMNS);
      return row as AddressRow;
    },

    async demoteAll(customerId: string): Promise<void> {
      await addresses().where({ customer_id: customerId, is_primary: true }).update({ is_primary: false, updated_at: db.fn.now() });
    },

    /** Makes the oldest remaining address primary; used after the primary one is deleted. */
    async promoteOldest(customerId: string): Promise<void> {
      const oldest = await addresses().where({ customer_id: customerId }).orderBy(OLDEST_FIRST).first('id');
      if (oldest) await addresses().where({ id: oldest.id }).update({ is_primary: true, updated_at: db.fn.now() });
    },

    async delete(id: string): Promise<void> {
      await addresses().where({ id }).delete();
    },
  };
}
