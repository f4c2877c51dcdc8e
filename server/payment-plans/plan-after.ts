/**
 * What an instalment's attempt does to its plan once its outcome is known (the plan runner's at
 * once when no charge could be made, instalment-outcome.ts's when the charge's answer is
 * recorded): paid, the instalment succeeded and the plan completed, rescheduled or going on;
 * declined, retried or the plan defaulted.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { DEBT_ACCOUNTS, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { PAYMENT_PLANS, PLAN_CHARGES, planRepo, type InstalmentRow, type PlanRow, type PlanValues } from './plan-repo';
import { scheduleFrom } from './plan-service';
import { amountDue } from '../payment-terms/payment-terms';
import { afterFailure, chargeDate } from './schedule';

/** What charging one instalment answered. */
export interface InstalmentCharge {
  /** The charge made (also a failed one); null when none could be made. */
  chargeId: string | null;
  /** Whether the money was taken (an ACH debit still settling counts). */
  paid: boolean;
  error?: string;
  errorCode?: string;
}

/** Ends a plan: its pending instalments are canceled. */
export async function endPlan(trx: Knex, tenant: Tenant, plan: PlanRow, status: 'completed' | 'canceled' | 'defaulted', now: Date): Promise<PlanValues> {
  await planRepo(trx, tenant).cancelPending(plan.id);
  return { status, ended_at: now, ...(status === 'canceled' ? { canceled_at: now } : {}) };
}

export async function afterPayment(
  trx: Knex.Transaction,
  tenant: Tenant,
  plan: PlanRow,
  instalment: InstalmentRow,
  amount: number,
  attempt: number,
  outcome: InstalmentCharge,
  now: Date,
): Promise<PlanValues> {
  const [changes] = await afterPayments(trx, [{ tenant, plan, instalment, amount, attempt, chargeId: outcome.chargeId, now }]);
  return changes!;
}

/** One paid instalment of a batch (`afterPayments`). */
export interface PaidInstalment {
  tenant: Tenant;
  plan: PlanRow;
  instalment: InstalmentRow;
  amount: number;
  attempt: number;
  chargeId: string | null;
  now: Date;
}

/**
 * Paid instalments (of different plans; their accounts' balances already moved) marked
 * succeeded, and what each plan does after it: completed when its account owes nothing more,
 * scheduled on one period after this instalment when none is pending but a balance is left,
 * else it goes on. One statement for all (and one per plan that ends or goes on). Answers each
 * plan's changes, in order.
 */
export async function afterPayments(trx: Knex.Transaction, paid: PaidInstalment[]): Promise<PlanValues[]> {
  if (paid.length === 0) return [];
  const column = <T>(pick: (each: PaidInstalment) => T) => paid.map(pick);
  // In the same statement: what each account owes now and whether another instalment of its
  // plan is pending (the statement still sees these as they were: not counted).
  const { rows } = await trx.raw<{ rows: (DebtAccountRow & { plan_id: string; pending: boolean })[] }>(
    `WITH v AS (SELECT unnest(?::uuid[]) AS id, unnest(?::bigint[]) AS amount, unnest(?::int[]) AS attempt, unnest(?::timestamptz[]) AS now, unnest(?::uuid[]) AS charge_id),
     paid AS (
       UPDATE ${PLAN_CHARGES} i
          SET status = 'succeeded', amount = v.amount, attempts = v.attempt, due_at = NULL, successfully_charged_at = v.now, charge_id = v.charge_id,
              error = NULL, error_code = NULL, updated_at = now()
         FROM v WHERE i.id = ANY(?::uuid[]) AND i.id = v.id
       RETURNING i.id)
     SELECT a.*, p.id AS plan_id,
            EXISTS (SELECT 1 FROM ${PLAN_CHARGES} i WHERE i.payment_plan_id = p.id AND i.status = 'pending' AND i.id NOT IN (SELECT id FROM paid)) AS pending
       FROM ${PAYMENT_PLANS} p JOIN ${DEBT_ACCOUNTS} a ON a.id = p.debt_account_id AND a.organization_id = p.organization_id AND a.environment = p.environment
      WHERE p.id = ANY(?::uuid[])`,
    [
      column((each) => each.instalment.id),
      column((each) => each.amount),
      column((each) => each.attempt),
      column((each) => each.now),
      column((each) => each.chargeId),
      // The instalments again, as an index condition (joined with the unnest alone, every instalment was scanned).
      column((each) => each.instalment.id),
      column((each) => each.plan.id),
    ] as unknown as Knex.RawBinding[],
  );
  const accountOf = new Map(rows.map(({ plan_id, ...account }) => [plan_id, account]));
  const changes: PlanValues[] = [];
  for (const { tenant, plan, instalment, now } of paid) {
    const account = accountOf.get(plan.id)!;
    if (amountDue(account) <= 0) changes.push({ consecutive_failures: 0, ...(await endPlan(trx, tenant, plan, 'completed', now)) });
    // The schedule ran out but a balance is left (it grew, or an instalment failed for good):
    // the plan goes on, one period after this instalment.
    else if (!account.pending) changes.push({ consecutive_failures: 0, ...(await scheduleFrom(trx, tenant, plan, account, chargeDate(plan.frequency!, instalment.charge_date, 1), now)) });
    else changes.push({ consecutive_failures: 0 });
  }
  return changes;
}

export async function afterDecline(
  trx: Knex.Transaction,
  tenant: Tenant,
  plan: PlanRow,
  instalment: InstalmentRow,
  attempt: number,
  outcome: InstalmentCharge,
  now: Date,
): Promise<PlanValues> {
  const consecutiveFailures = plan.consecutive_failures + 1;
  const next = afterFailure({ attempts: attempt, consecutiveFailures, chargeDate: instalment.charge_date });
  await trx(PLAN_CHARGES)
    .where({ id: instalment.id })
    .update({
      status: next.retryAt ? 'pending' : 'failed',
      attempts: attempt,
      due_at: next.retryAt,
      charge_id: outcome.chargeId,
      error: outcome.error?.slice(0, 255) ?? 'The charge failed.',
      error_code: outcome.errorCode?.slice(0, 32) ?? null,
      updated_at: trx.fn.now(),
    });
  if (next.defaulted) return { consecutive_failures: consecutiveFailures, ...(await endPlan(trx, tenant, plan, 'defaulted', now)) };
  return { consecutive_failures: consecutiveFailures };
}
