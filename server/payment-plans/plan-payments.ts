/**
 * What money moved outside a plan's own run does to the plan, in the transaction that moved it:
 * a one-time charge (made at once or scheduled) that pays an account off completes its plan at
 * once, and an ACH debit of an instalment that the bank returns reopens that instalment as a
 * failed attempt (retried, and counted toward the default, like a decline).
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { DEBT_ACCOUNTS } from '../debt-accounts/debt-account-repo';
import { PAYMENT_PLANS, PLAN_CHARGES, planRepo, type InstalmentRow, type PlanValues } from './plan-repo';
import { afterFailure } from './schedule';
import { announce } from '../events/listeners';

/**
 * Completes the active plans of `accountIds` whose account is now paid off. The caller holds
 * the accounts' locks (plans are locked after accounts, the order the scheduler uses).
 */
export async function completePaidOffPlans(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, accountIds: string[], now: Date): Promise<void> {
  await completePaidOffPlansOf(trx, events, tenant, [{ accountIds, now }]);
}

/**
 * As completePaidOffPlans for many payments of one tenant at once (a batch of answers): the
 * plans of all their accounts read in one statement; each plan completed at the time of the
 * first payment that named its account.
 */
export async function completePaidOffPlansOf(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, payments: { accountIds: string[]; now: Date }[]): Promise<void> {
  const nowOf = new Map<string, Date>();
  for (const { accountIds, now } of payments) for (const id of accountIds) if (!nowOf.has(id)) nowOf.set(id, now);
  const accountIds = [...nowOf.keys()];
  if (accountIds.length === 0) return;
  const paidOff: { id: string; debt_account_id: string }[] = await scoped(trx, PAYMENT_PLANS, tenant)
    .join(DEBT_ACCOUNTS, `${DEBT_ACCOUNTS}.id`, `${PAYMENT_PLANS}.debt_account_id`)
    .whereIn(`${PAYMENT_PLANS}.debt_account_id`, accountIds)
    .where(`${PAYMENT_PLANS}.status`, 'active')
    .where(`${DEBT_ACCOUNTS}.current_balance`, '<=', 0)
    .forUpdate(PAYMENT_PLANS)
    .select(`${PAYMENT_PLANS}.id`, `${PAYMENT_PLANS}.debt_account_id`);
  const plans = planRepo(trx, tenant);
  for (const plan of paidOff) {
    await plans.cancelPending(plan.id);
    await plans.update(plan.id, { status: 'completed', ended_at: nowOf.get(plan.debt_account_id)! });
  }
  if (paidOff.length > 0) await events.record(trx, tenant, [{ name: 'payment-plan.update', ids: paidOff.map((plan) => plan.debt_account_id) }]);
}

/**
 * The ACH debit `chargeId` of an instalment was returned (the balance is already given back):
 * the instalment is a failed attempt again. An active plan retries it or defaults; a plan that
 * this debit had completed is active again (unless another plan was opened on the account
 * meanwhile). A canceled or defaulted plan stays as it is, with the instalment failed.
 */
export async function reopenReturnedInstalment(
  trx: Knex.Transaction,
  events: EventRecorder,
  tenant: Tenant,
  charge: { id: string; payment_plan_charge_id: string | null; error: string | null; return_code: string | null },
  now: Date,
): Promise<void> {
  if (!charge.payment_plan_charge_id) return;
  const instalment = (await scoped(trx, PLAN_CHARGES, tenant).where({ id: charge.payment_plan_charge_id }).forUpdate().first()) as InstalmentRow | undefined;
  if (!instalment || instalment.status !== 'succeeded' || instalment.charge_id !== charge.id) return;
  const plans = planRepo(trx, tenant);
  const plan = (await plans.find(instalment.payment_plan_id, { forUpdate: true }))!;
  const consecutiveFailures = plan.consecutive_failures + 1;
  let next = afterFailure({ attempts: instalment.attempts, consecutiveFailures, chargeDate: instalment.charge_date });
  // A completed plan comes back only with something left to do (a retry, or its default).
  const reopen =
    plan.status === 'active' || (plan.status === 'completed' && (next.retryAt !== null || next.defaulted) && !(await plans.openOf(plan.debt_account_id)));
  if (!reopen) next = { retryAt: null, defaulted: false };
  await scoped(trx, PLAN_CHARGES, tenant)
    .where({ id: instalment.id })
    .update({
      status: next.retryAt ? 'pending' : 'failed',
      due_at: next.retryAt,
      successfully_charged_at: null,
      error: (charge.error ?? 'The bank returned the ACH debit.').slice(0, 255),
      error_code: charge.return_code,
      updated_at: trx.fn.now(),
    });
  let changes: PlanValues = {};
  if (reopen) {
    changes = { consecutive_failures: consecutiveFailures, status: 'active', ended_at: null };
    if (next.defaulted) {
      await plans.cancelPending(plan.id);
      changes = { ...changes, status: 'defaulted', ended_at: now };
      await announce(trx, events, tenant, 'plan.defaulted', { planId: plan.id, accountId: plan.debt_account_id, now });
    }
  }
  await plans.update(plan.id, changes);
  await events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [plan.debt_account_id] }]);
}
