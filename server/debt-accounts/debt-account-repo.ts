import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, UUID, externalIdTaken } from '../db/tenant';
import { DEBT_ACCOUNT_LOCATIONS } from '../locations/location-repo';
import type { Itemization } from './itemization';

export const DEBT_ACCOUNTS = 'debt_accounts';
export const PAYMENT_PLANS = 'payment_plans';

type Status = components['schemas']['DebtAccountStatus'];
type BillingType = components['schemas']['BillingType'];

/** Columns of an account row, with its parent's external_id joined in. */
export const DEBT_ACCOUNT_COLUMNS = [
  ...['id', 'customer_id', 'location_id', 'parent_id', 'external_id', 'external_account_number', 'billing_type', 'balance', 'current_balance', 'status', 'external_status', 'rules', 'metadata', 'settlement_discount', 'itemization', 'validation_notice_sent_at', 'created_at', 'updated_at'].map(
    (column) => `${DEBT_ACCOUNTS}.${column}`,
  ),
  'parent.external_id as parent_external_id',
];

export interface DebtAccountRow {
  id: string;
  customer_id: string;
  location_id: string;
  parent_id: string | null;
  parent_external_id: string | null;
  external_id: string | null;
  external_account_number: string | null;
  billing_type: BillingType[] | null;
  /** bigint: pg answers strings; the mapper makes numbers. */
  balance: string;
  current_balance: string;
  status: Status;
  external_status: string | null;
  rules: { min_payment_amount?: number };
  metadata: Record<string, string>;
  /** bigint: the cents an accepted settlement offer forgives; null without one (payment-terms.ts). */
  settlement_discount: string | null;
  /** What the validation notice itemizes (itemization.ts); null until given. */
  itemization: Itemization | null;
  /** `YYYY-MM-DD`: the day the validation notice was sent. */
  validation_notice_sent_at: string | null;
  created_at: Date;
  updated_at: Date;
}

export type DebtAccountValues = Partial<
  Omit<DebtAccountRow, 'id' | 'parent_external_id' | 'balance' | 'current_balance' | 'settlement_discount' | 'created_at' | 'updated_at'> & {
    balance: number;
    current_balance: number;
  }
>;

export interface PaymentPlanRow {
  id: string;
  debt_account_id: string;
  frequency: components['schemas']['PaymentPlanFrequency'] | null;
  start_date: string | null;
  amount: string | null;
  status: components['schemas']['PaymentPlanStatus'];
  created_at: Date;
  updated_at: Date;
}

export const PLAN_COLUMNS = ['id', 'debt_account_id', 'frequency', 'start_date', 'amount', 'status', 'created_at', 'updated_at'];

function serialize(values: DebtAccountValues): Record<string, unknown> {
  const row: Record<string, unknown> = { ...values };
  if (values.rules) row.rules = JSON.stringify(values.rules);
  if (values.metadata) row.metadata = JSON.stringify(values.metadata);
  if (values.itemization) row.itemization = JSON.stringify(values.itemization);
  return row;
}

export function debtAccountRepo(db: Knex, tenant: Tenant) {
  /** Every read starts here: the tenant's accounts with their parent's external_id. */
  const accounts = () =>
    scoped(db, DEBT_ACCOUNTS, tenant).leftJoin(`${DEBT_ACCOUNTS} as parent`, 'parent.id', `${DEBT_ACCOUNTS}.parent_id`);

  const one = async (where: (query: Knex.QueryBuilder) => Knex.QueryBuilder, forUpdate: boolean) => {
    const query = where(accounts()).first(DEBT_ACCOUNT_COLUMNS);
    return (await (forUpdate ? query.forUpdate(DEBT_ACCOUNTS) : query)) as DebtAccountRow | undefined;
  };

  return {
    query: accounts,

    /** `{id|external_id}`: a UUID as id first, then as external_id. */
    async find(key: string, { forUpdate = false } = {}): Promise<DebtAccountRow | undefined> {
      if (UUID.test(key)) {
        const byId = await one((q) => q.where(`${DEBT_ACCOUNTS}.id`, key), forUpdate);
        if (byId) return byId;
      }
      return one((q) => q.where(`${DEBT_ACCOUNTS}.external_id`, key), forUpdate);
    },

    async findByExternalId(externalId: string, { forUpdate = false } = {}): Promise<DebtAccountRow | undefined> {
      return one((q) => q.where(`${DEBT_ACCOUNTS}.external_id`, externalId), forUpdate);
    },

    async forCustomers(customerIds: string[]): Promise<DebtAccountRow[]> {
      if (customerIds.length === 0) return [];
      return accounts()
        .whereIn(`${DEBT_ACCOUNTS}.customer_id`, customerIds)
        .orderBy([
          { column: `${DEBT_ACCOUNTS}.created_at`, order: 'asc' },
          { column: `${DEBT_ACCOUNTS}.id`, order: 'asc' },
        ])
        .select(DEBT_ACCOUNT_COLUMNS);
    },

    async countForCustomer(customerId: string): Promise<number> {
      const [row] = await scoped(db, DEBT_ACCOUNTS, tenant).where({ customer_id: customerId }).count<{ count: string }[]>({ count: '*' });
      return Number(row?.count ?? 0);
    },

    async childCount(id: string): Promise<number> {
      const [row] = await scoped(db, DEBT_ACCOUNTS, tenant).where({ parent_id: id }).count<{ count: string }[]>({ count: '*' });
      return Number(row?.count ?? 0);
    },

    externalIdTaken: (externalId: string, exceptId?: string) => externalIdTaken(scoped(db, DEBT_ACCOUNTS, tenant), externalId, exceptId),

    async insert(values: DebtAccountValues & { balance: number; current_balance: number }): Promise<string> {
      const [row] = await db(DEBT_ACCOUNTS)
        .insert({ ...serialize(values), ...tenantColumns(tenant) })
        .returning<{ id: string }[]>(['id']);
      return row!.id;
    },

    async update(id: string, values: DebtAccountValues): Promise<void> {
      await scoped(db, DEBT_ACCOUNTS, tenant)
        .where({ id })
        .update({ ...serialize(values), updated_at: db.fn.now() });
    },

    async delete(id: string): Promise<void> {
      await scoped(db, DEBT_ACCOUNTS, tenant).where({ id }).delete();
    },

    /**
     * A parent's amounts become the sums of its children's (0 and 0 when it has none left).
     * The caller holds the parent's row lock, so the sums read every sibling change committed
     * before it and none can commit in between.
     */
    async recalculate(parentId: string): Promise<void> {
      await db.raw(
        `UPDATE ${DEBT_ACCOUNTS} AS parent
            SET balance = sums.balance, current_balance = sums.current_balance, updated_at = now()
           FROM (SELECT coalesce(sum(balance), 0) AS balance, coalesce(sum(current_balance), 0) AS current_balance
                   FROM ${DEBT_ACCOUNTS} WHERE parent_id = :parentId) AS sums
          WHERE parent.id = :parentId AND parent.organization_id = :organizationId AND parent.environment = :environment`,
        { parentId, organizationId: tenant.organizationId, environment: tenant.environment },
      );
    },

    async sums(parentId: string): Promise<{ balance: number; current_balance: number }> {
      const [row] = await scoped(db, DEBT_ACCOUNTS, tenant)
        .where({ parent_id: parentId })
        .select(db.raw('coalesce(sum(balance), 0) AS balance, coalesce(sum(current_balance), 0) AS current_balance'));
      return { balance: Number(row.balance), current_balance: Number(row.current_balance) };
    },

    /** Locks parents in id order, so two moves between the same parents cannot deadlock. */
    async lockParents(ids: (string | null | undefined)[]): Promise<void> {
      const unique = [...new Set(ids.filter((id): id is string => typeof id === 'string'))].sort();
      for (const id of unique) await scoped(db, DEBT_ACCOUNTS, tenant).where({ id }).forUpdate().first('id');
    },

    async additionalLocations(accountIds: string[]): Promise<{ debt_account_id: string; location_id: string }[]> {
      if (accountIds.length === 0) return [];
      return db(DEBT_ACCOUNT_LOCATIONS)
        .where({ organization_id: tenant.organizationId, environment: tenant.environment })
        .whereIn('debt_account_id', accountIds)
        .orderBy([{ column: 'created_at' }, { column: 'location_id' }])
        .select('debt_account_id', 'location_id');
    },

    /** An account's own location is never also one of its additional ones. */
    async detachAdditional(accountId: string, locationId: string): Promise<void> {
      await db(DEBT_ACCOUNT_LOCATIONS).where({ debt_account_id: accountId, location_id: locationId }).delete();
    },

    async replaceAdditionalLocations(accountId: string, locationIds: string[]): Promise<void> {
      await db(DEBT_ACCOUNT_LOCATIONS).where({ debt_account_id: accountId }).delete();
      if (locationIds.length === 0) return;
      await db(DEBT_ACCOUNT_LOCATIONS).insert(
        locationIds.map((locationId) => ({ debt_account_id: accountId, location_id: locationId, ...tenantColumns(tenant) })),
      );
    },

    async plans(accountIds: string[]): Promise<PaymentPlanRow[]> {
      if (accountIds.length === 0) return [];
      // Oldest first: keyed by account, the latest plan (the open one, if any) is the one shown.
      return scoped(db, PAYMENT_PLANS, tenant)
        .whereIn('debt_account_id', accountIds)
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .select(PLAN_COLUMNS);
    },

    async insertPlan(accountId: string, plan: Omit<PaymentPlanRow, 'id' | 'debt_account_id' | 'created_at' | 'updated_at' | 'amount'> & { amount: number | null }): Promise<void> {
      await db(PAYMENT_PLANS).insert({ ...plan, debt_account_id: accountId, ...tenantColumns(tenant) });
    },
  };
}
