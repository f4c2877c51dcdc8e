/**
 * The end of an instalment's attempt: its charge's answer was recorded (by the run that made it,
 * or by recovery after a crash), in the transaction that recorded it, which holds the account
 * family's lock (plans and instalments are locked after it, the scheduler's order). A paid
 * attempt moves the plan on; a declined one is retried or defaults the plan (plan-runner.ts).
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import { announce, type Happenings } from '../events/listeners';
import type { Tenant } from '../kernel/tenant';
import { PLAN_CHARGE_ATTEMPTS, PLAN_CHARGES, planRepo, type InstalmentRow } from './plan-repo';
import { afterDecline, afterPayment } from './plan-runner';

export async function finishInstalment(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, { charge, declined, now }: Happenings['charge.finished']): Promise<void> {
  if (!charge.payment_plan_charge_id) return;
  const unlocked = (await trx(PLAN_CHARGES).where({ id: charge.payment_plan_charge_id }).first('payment_plan_id')) as { payment_plan_id: string } | undefined;
  if (!unlocked) return;
  const plans = planRepo(trx, tenant);
  const plan = await plans.find(unlocked.payment_plan_id, { forUpdate: true });
  const instalment = (await trx(PLAN_CHARGES).where({ id: charge.payment_plan_charge_id }).forUpdate().first()) as InstalmentRow | undefined;
  const started = (await trx(PLAN_CHARGE_ATTEMPTS).where({ payment_plan_charge_id: charge.payment_plan_charge_id, charge_id: charge.id, outcome: 'started' }).first('attempt')) as
    | { attempt: number }
    | undefined;
  if (!plan || !instalment || !started) return;
  const paid = charge.status !== 'failed';
  await trx(PLAN_CHARGE_ATTEMPTS).where({ payment_plan_charge_id: instalment.id, attempt: started.attempt }).update({ outcome: paid ? 'paid' : 'failed' });
  // A plan canceled while its instalment was in flight: the charge stands, the plan stays as it is.
  if (plan.status !== 'active' || instalment.status !== 'pending') return;
  const outcome = { chargeId: charge.id, paid, error: declined?.message ?? charge.error ?? undefined, errorCode: declined?.errorCode ?? charge.error_code ?? undefined };
  // What the plan runner says of an instalment it finishes at once, said here too (settlement offers listen).
  if (paid) await announce(trx, events, tenant, 'instalment.paid', { accountIds: [plan.debt_account_id], chargeId: charge.id, now });
  const changes = paid
    ? await afterPayment(trx, tenant, plan, instalment, Number(charge.amount), started.attempt, outcome, now)
    : await afterDecline(trx, tenant, plan, instalment, started.attempt, outcome, now);
  if (changes.status === 'defaulted') await announce(trx, events, tenant, 'plan.defaulted', { planId: plan.id, accountId: plan.debt_account_id, now });
  await plans.update(plan.id, changes);
  await events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [plan.debt_account_id] }]);
}
