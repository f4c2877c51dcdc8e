/** Autopays and their monthly runs: the SQL, scoped to the tenant. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';
import { AUTOPAY_COLUMNS, AUTOPAYS, type AutopayRow } from '../debt-accounts/account-autopay';
import type { DueRef } from '../payment-plans/plan-runner';

export const AUTOPAY_RUNS = 'autopay_runs';

export type AutopayValues = Pick<AutopayRow, 'customer_id' | 'payment_method_id' | 'amount_type' | 'day_of_month' | 'next_run_at'> & { amount: number | null };

/** `processing`: the run's charge waits for the gateway's answer (autopay-outcome.ts finishes it). */
export type RunOutcome = 'charged' | 'failed' | 'skipped' | 'processing';

export function autopayRepo(db: Knex, tenant: Tenant) {
  const autopays = () => scoped(db, AUTOPAYS, tenant);
  return {
    async find(accountId: string, { forUpdate = false } = {}): Promise<AutopayRow | undefined> {
      const query = autopays().where(`${AUTOPAYS}.debt_account_id`, accountId).first(AUTOPAY_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<AutopayRow | undefined>;
    },

    /** Turns autopay on for the account, or replaces its choices: one autopay per account. */
    async save(accountId: string, values: AutopayValues): Promise<AutopayRow> {
      const [row] = await db(AUTOPAYS)
        .insert({ ...values, debt_account_id: accountId, ...tenantColumns(tenant) })
        .onConflict('debt_account_id')
        .merge({ ...values, last_outcome: null, last_error: null, updated_at: db.fn.now() })
        .returning(AUTOPAY_COLUMNS);
      return row as AutopayRow;
    },

    /** Answers whether there was one to stop. */
    async remove(accountId: string): Promise<boolean> {
      return (await autopays().where({ debt_account_id: accountId }).delete()) > 0;
    },

    /** Claims the account's run of `month`; false when some run of that month was already recorded. */
    async claimMonth(accountId: string, month: string, outcome: RunOutcome): Promise<boolean> {
      const rows = await db(AUTOPAY_RUNS)
        .insert({ debt_account_id: accountId, month, outcome, ...tenantColumns(tenant) })
        .onConflict(['debt_account_id', 'month'])
        .ignore()
        .returning('month');
      return rows.length > 0;
    },

    async recordRun(accountId: string, month: string, values: { outcome: RunOutcome; charge_id: string | null; reason: string | null }): Promise<void> {
      await scoped(db, AUTOPAY_RUNS, tenant).where({ debt_account_id: accountId, month }).update({ ...values, reason: values.reason?.slice(0, 255) ?? null });
    },

    /**
     * The answer of the run in flight whose charge is `chargeId`: the run as it ends; undefined
     * when no run waits for that charge (another charge, or one already finished).
     */
    async finishRun(chargeId: string, values: { outcome: 'charged' | 'failed'; reason: string | null }): Promise<{ debt_account_id: string; month: string } | undefined> {
      const [run] = (await scoped(db, AUTOPAY_RUNS, tenant)
        .where({ charge_id: chargeId, outcome: 'processing' })
        .update({ ...values, reason: values.reason?.slice(0, 255) ?? null })
        .returning(['debt_account_id', 'month'])) as { debt_account_id: string; month: string }[];
      return run;
    },

    /** The account's autopay shows the answer of its run in flight (not a newer state: turned on again meanwhile, it has not run). */
    async afterAnswer(accountId: string, values: { last_outcome: 'charged' | 'failed'; last_error: string | null }): Promise<void> {
      await autopays()
        .where({ debt_account_id: accountId, last_outcome: 'processing' })
        .update({ ...values, last_error: values.last_error?.slice(0, 255) ?? null, updated_at: db.fn.now() });
    },

    async afterRun(id: string, values: Partial<Pick<AutopayRow, 'next_run_at' | 'last_run_at' | 'last_outcome' | 'last_error'>>): Promise<void> {
      await autopays()
        .where({ id })
        .update({ ...values, last_error: values.last_error?.slice(0, 255) ?? null, updated_at: db.fn.now() });
    },
  };
}

/** Autopays due at real time `realNow`, every tenant (each sandbox on its own clock), earliest first. */
export async function dueAutopays(db: Knex, realNow: Date, limit = 200): Promise<DueRef[]> {
  const { rows } = await db.raw<{ rows: DueRef[] }>(
    `SELECT a.debt_account_id AS id, a.organization_id, a.environment, a.next_run_at AS due_at, a.debt_account_id AS lane
       FROM ${AUTOPAYS} a
       LEFT JOIN sandbox_clocks c ON a.environment = 'sandbox' AND c.organization_id = a.organization_id
      WHERE a.next_run_at <= ?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
      ORDER BY a.next_run_at, a.debt_account_id
      LIMIT ?`,
    [realNow, limit],
  );
  return rows;
}

/** One tenant's autopays due at or before `upTo`, earliest first (the sandbox clock's advance). */
export async function dueAutopaysOf(db: Knex, tenant: Tenant, upTo: Date, limit = 1): Promise<DueRef[]> {
  return scoped(db, AUTOPAYS, tenant)
    .where('next_run_at', '<=', upTo)
    .orderBy([{ column: 'next_run_at' }, { column: 'debt_account_id' }])
    .limit(limit)
    .select('debt_account_id as id', 'organization_id', 'environment', 'next_run_at as due_at');
}
