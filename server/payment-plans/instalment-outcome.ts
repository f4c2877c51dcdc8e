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
import { PAYMENT_PLANS, PLAN_CHARGE_ATTEMPTS, PLAN_CHARGES, PLAN_COLUMNS, planRepo, type InstalmentRow, type PlanRow } from './plan-repo';
import { afterDecline, afterPayment } from './plan-runner';

export async function finishInstalment(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, { charge, declined, now }: Happenings['charge.finished']): Promise<void> {
  if (!charge.payment_plan_charge_id) return;
  const plans = planRepo(trx, tenant);
  // The plan, then the instalment with the attempt this charge started (the family is locked already).
  const plan = (await trx(PAYMENT_PLANS)
    .join(`${PLAN_CHARGES} as i`, 'i.payment_plan_id', `${PAYMENT_PLANS}.id`)
    .where('i.id', charge.payment_plan_charge_id)
    .where({ [`${PAYMENT_PLANS}.organization_id`]: tenant.organizationId, [`${PAYMENT_PLANS}.environment`]: tenant.environment })
    .forUpdate(PAYMENT_PLANS)
    .first(PLAN_COLUMNS)) as PlanRow | undefined;
  const paid = charge.status !== 'failed';
  // The instalment locked, with the attempt this charge started, which is ended (paid or failed)
  // in the same statement: only an attempt still `started` by this very charge.
  const ended = trx(PLAN_CHARGE_ATTEMPTS)
    .where({ payment_plan_charge_id: charge.payment_plan_charge_id, charge_id: charge.id, outcome: 'started' })
    .update({ outcome: paid ? 'paid' : 'failed' })
    .returning('attempt');
  const row = (await trx(`${PLAN_CHARGES} as i`)
    .with('ended', ended)
    .where('i.id', charge.payment_plan_charge_id)
    .forUpdate('i')
    .first('i.*', trx.raw('(SELECT attempt FROM ended LIMIT 1) AS started_attempt'))) as (InstalmentRow & { started_attempt: number | null }) | undefined;
  const started = row?.started_attempt != null ? { attempt: row.started_attempt } : undefined;
  const instalment = row && (({ started_attempt: _started, ...rest }) => rest as InstalmentRow)(row);
  if (!plan || !instalment || !started) return;
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
