import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';
import type { ShownPaymentMethod } from '../kernel/masking';

export const PAYMENT_METHODS = 'payment_methods';
export const PAYMENT_METHOD_COLUMNS = [
  'id',
  'customer_id',
  'type',
  'card_holder',
  'card_last4',
  'card_brand',
  'card_exp_month',
  'card_exp_year',
  'card_zip',
  'account_holder',
  'account_type',
  'routing_number_masked',
  'account_number_masked',
  'account_zip',
  'account_state',
  'is_primary',
  'gateway_token',
  'created_at',
  'updated_at',
];

/** A stored method: the columns that may be shown (masking.ts) and those that never are. */
export interface PaymentMethodRow extends ShownPaymentMethod {
  id: string;
  customer_id: string;
  is_primary: boolean;
  /** The gateway's token; null when saved before payments existed or without a gateway. */
  gateway_token: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentMethodValues extends Partial<Omit<PaymentMethodRow, 'id' | 'customer_id' | 'created_at' | 'updated_at'>> {
  card_fingerprint?: string;
  routing_number_sealed?: string;
  account_number_sealed?: string;
}

export function paymentMethodRepo(db: Knex, tenant: Tenant) {
  const methods = () => scoped(db, PAYMENT_METHODS, tenant);
  return {
    async forCustomers(customerIds: string[]): Promise<PaymentMethodRow[]> {
      if (customerIds.length === 0) return [];
      return methods()
        .whereIn('customer_id', customerIds)
        .orderBy([
          { column: 'created_at', order: 'asc' },
          { column: 'id', order: 'asc' },
        ])
        .select(PAYMENT_METHOD_COLUMNS);
    },

    /** The tenant's methods of one customer, for paging. */
    ofCustomer(customerId: string): Knex.QueryBuilder {
      return methods().where({ customer_id: customerId });
    },

    /** The tenant's methods among `ids` (those that exist), in one statement. */
    async findMany(ids: string[]): Promise<PaymentMethodRow[]> {
      if (ids.length === 0) return [];
      return methods().whereRaw('id = ANY(?::uuid[])', [ids]).select(PAYMENT_METHOD_COLUMNS);
    },

    async find(id: string, { forUpdate = false } = {}): Promise<PaymentMethodRow | undefined> {
      const query = methods().where({ id }).first(PAYMENT_METHOD_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<PaymentMethodRow | undefined>;
    },

    async demoteAll(customerId: string): Promise<void> {
      await methods().where({ customer_id: customerId, is_primary: true }).update({ is_primary: false, updated_at: db.fn.now() });
    },

    async makePrimary(id: string): Promise<PaymentMethodRow> {
      const [row] = await methods().where({ id }).update({ is_primary: true, updated_at: db.fn.now() }).returning(PAYMENT_METHOD_COLUMNS);
      return row as PaymentMethodRow;
    },

    async promoteOldest(customerId: string): Promise<void> {
      const oldest = await methods()
        .where({ customer_id: customerId })
        .orderBy([
          { column: 'created_at', order: 'asc' },
          { column: 'id', order: 'asc' },
        ])
        .first('id');
      if (oldest) await methods().where({ id: oldest.id }).update({ is_primary: true, updated_at: db.fn.now() });
    },

    async delete(id: string): Promise<void> {
      await methods().where({ id }).delete();
    },

    async hasAny(customerId: string): Promise<boolean> {
      return (await methods().where({ customer_id: customerId }).first('id')) !== undefined;
    },

    async insert(customerId: string, values: PaymentMethodValues): Promise<PaymentMethodRow> {
      const [row] = await db(PAYMENT_METHODS)
        .insert({ ...values, customer_id: customerId, ...tenantColumns(tenant) })
        .returning(PAYMENT_METHOD_COLUMNS);
      return row as PaymentMethodRow;
    },
  };
}
