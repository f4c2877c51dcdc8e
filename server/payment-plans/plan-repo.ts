/** The SQL of payment plans and their instalments, every query scoped to one tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';
import type { Frequency } from './schedule';

export const PAYMENT_PLANS = 'payment_plans';
export const PLAN_CHARGES = 'payment_plan_charges';
export const PLAN_CHARGE_ATTEMPTS = 'payment_plan_charge_attempts';

type Status = components['schemas']['PaymentPlanStatus'];
export type InstalmentStatus = components['schemas']['PaymentPlanInstalment']['status'];

export const OPEN_STATUSES: Status[] = ['pending_configuration', 'pending_enrollment', 'active'];

export const PLAN_COLUMNS = [
  'id',
  'debt_account_id',
  'frequency',
  'start_date',
  'amount',
  'status',
  'payment_method_id',
  'balance_at_enrollment',
  'enrolled_at',
  'canceled_at',
  'ended_at',
  'consecutive_failures',
  'source',
  'created_at',
  'updated_at',
].map((column) => `${PAYMENT_PLANS}.${column}`);

export interface PlanRow {
  id: string;
  debt_account_id: string;
  frequency: Frequency | null;
  start_date: string | null;
  /** bigint: pg answers strings. */
  amount: string | null;
  status: Status;
  payment_method_id: string | null;
  balance_at_enrollment: string | null;
  enrolled_at: Date | null;
  canceled_at: Date | null;
  ended_at: Date | null;
  consecutive_failures: number;
  source: string;
  created_at: Date;
  updated_at: Date;
}

export type PlanValues = Partial<Omit<PlanRow, 'id' | 'debt_account_id' | 'amount' | 'balance_at_enrollment' | 'created_at' | 'updated_at'>> & {
  amount?: number;
  balance_at_enrollment?: number;
};

const INSTALMENT_COLUMNS = [
  'id',
  'payment_plan_id',
  'seq',
  'charge_date',
  'amount',
  'status',
  'attempts',
  'due_at',
  'successfully_charged_at',
  'charge_id',
  'error',
  'error_code',
  'created_at',
  'updated_at',
];

export interface InstalmentRow {
  id: string;
  payment_plan_id: string;
  seq: number;
  charge_date: string;
  amount: string;
  status: InstalmentStatus;
  attempts: number;
  due_at: Date | null;
  successfully_charged_at: Date | null;
  charge_id: string | null;
  error: string | null;
  error_code: string | null;
  created_at: Date;
  updated_at: Date;
}

export function planRepo(db: Knex, tenant: Tenant) {
  const plans = () => scoped(db, PAYMENT_PLANS, tenant);
  return {
    /** Plans, filtered for a list. */
    query(filter: { debtAccountId?: string; status?: Status } = {}): Knex.QueryBuilder {
      const query = plans();
      if (filter.debtAccountId) query.where(`${PAYMENT_PLANS}.debt_account_id`, filter.debtAccountId);
      if (filter.status) query.where(`${PAYMENT_PLANS}.status`, filter.status);
      return query;
    },

    async find(id: string, { forUpdate = false } = {}): Promise<PlanRow | undefined> {
      const query = plans().where(`${PAYMENT_PLANS}.id`, id).first(PLAN_COLUMNS);
      return (await (forUpdate ? query.forUpdate() : query)) as PlanRow | undefined;
    },

    async openOf(accountId: string): Promise<PlanRow | undefined> {
      return (await plans().where({ debt_account_id: accountId }).whereIn('status', OPEN_STATUSES).first(PLAN_COLUMNS)) as PlanRow | undefined;
    },

    async insert(accountId: string, values: PlanValues & { status: Status }): Promise<PlanRow> {
      const [row] = await db(PAYMENT_PLANS)
        .insert({ ...values, debt_account_id: accountId, ...tenantColumns(tenant) })
        .returning(PLAN_COLUMNS.map((column) => column.slice(PAYMENT_PLANS.length + 1)));
      return row as PlanRow;
    },

    async update(id: string, values: PlanValues): Promise<PlanRow> {
      const [row] = await plans()
        .where({ id })
        .update({ ...values, updated_at: db.fn.now() })
        .returning(PLAN_COLUMNS.map((column) => column.slice(PAYMENT_PLANS.length + 1)));
      return row as PlanRow;
    },

    async instalments(planIds: string[]): Promise<InstalmentRow[]> {
      if (planIds.length === 0) return [];
      return scoped(db, PLAN_CHARGES, tenant)
        .whereIn('payment_plan_id', planIds)
        .orderBy([{ column: 'charge_date' }, { column: 'seq' }])
        .select(INSTALMENT_COLUMNS);
    },

    async insertInstalments(planId: string, rows: { seq: number; charge_date: string; amount: number; due_at: Date }[]): Promise<void> {
      if (rows.length === 0) return;
      await db(PLAN_CHARGES).insert(rows.map((row) => ({ ...row, payment_plan_id: planId, ...tenantColumns(tenant) })));
    },

    async nextSeq(planId: string): Promise<number> {
      const [row] = await scoped(db, PLAN_CHARGES, tenant).where({ payment_plan_id: planId }).max<{ max: number | null }[]>({ max: 'seq' });
      return (row?.max ?? 0) + 1;
    },

    /** Cancels what is still to pay; answers the first pending instalment's charge date, if any. */
    async cancelPending(planId: string): Promise<string | undefined> {
      const pending = await scoped(db, PLAN_CHARGES, tenant)
        .where({ payment_plan_id: planId, status: 'pending' })
        .update({ status: 'canceled', due_at: null, updated_at: db.fn.now() })
        .returning<{ charge_date: string }[]>(['charge_date']);
      return pending.map((row) => row.charge_date).sort()[0];
    },
  };
}

/**
 * The changes of many plans (of any tenants), in one statement per distinct change (the due
 * work's answers mostly share one: `consecutive_failures` back to 0).
 */
export async function updatePlans(db: Knex, updates: { tenant: Tenant; planId: string; changes: PlanValues }[]): Promise<void> {
  const groups = new Map<string, { tenant: Tenant; changes: PlanValues; ids: string[] }>();
  for (const { tenant, planId, changes } of updates) {
    const key = JSON.stringify([tenant.organizationId, tenant.environment, changes]);
    const group = groups.get(key) ?? groups.set(key, { tenant, changes, ids: [] }).get(key)!;
    group.ids.push(planId);
  }
  // One text whatever the number of plans (an array, not an IN list): one prepared statement.
  for (const { tenant, changes, ids } of groups.values()) await scoped(db, PAYMENT_PLANS, tenant).whereRaw('id = ANY(?::uuid[])', [ids]).update({ ...changes, updated_at: db.fn.now() });
}
