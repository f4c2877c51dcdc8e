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

/** An instalment's columns (InstalmentRow), read beside its plan's. */
const INSTALMENT_COLUMNS = ['id', 'payment_plan_id', 'seq', 'charge_date', 'amount', 'status', 'attempts', 'due_at', 'successfully_charged_at', 'charge_id', 'error', 'error_code', 'created_at', 'updated_at'] as const;

export async function finishInstalment(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, { charge, declined, now }: Happenings['charge.finished']): Promise<void> {
  if (charge.source !== 'payment_plan' || !charge.payment_plan_charge_id) return;
  const plans = planRepo(trx, tenant);
  const paid = charge.status !== 'failed';
  // The attempt this charge started, ended (paid or failed) in the statement that locks the plan
  // and the instalment (the family is locked already): only an attempt still `started` by this
  // very charge.
  const ended = trx(PLAN_CHARGE_ATTEMPTS)
    .where({ payment_plan_charge_id: charge.payment_plan_charge_id, charge_id: charge.id, outcome: 'started' })
    .update({ outcome: paid ? 'paid' : 'failed' })
    .returning('attempt');
  const row = (await trx(PAYMENT_PLANS)
    .with('ended', ended)
    .join(`${PLAN_CHARGES} as i`, 'i.payment_plan_id', `${PAYMENT_PLANS}.id`)
    .where('i.id', charge.payment_plan_charge_id)
    .where({ [`${PAYMENT_PLANS}.organization_id`]: tenant.organizationId, [`${PAYMENT_PLANS}.environment`]: tenant.environment })
    .forUpdate([PAYMENT_PLANS, 'i'])
    .first([...PLAN_COLUMNS, ...INSTALMENT_COLUMNS.map((column) => `i.${column} as instalment_${column}`), trx.raw('(SELECT attempt FROM ended LIMIT 1) AS started_attempt')])) as
    | (PlanRow & Record<`instalment_${(typeof INSTALMENT_COLUMNS)[number]}`, unknown> & { started_attempt: number | null })
    | undefined;
  if (!row || row.started_attempt == null) return;
  const started = { attempt: row.started_attempt };
  const plan = Object.fromEntries(Object.entries(row).filter(([key]) => !key.startsWith('instalment_') && key !== 'started_attempt')) as unknown as PlanRow;
  const instalment = Object.fromEntries(INSTALMENT_COLUMNS.map((column) => [column, row[`instalment_${column}`]])) as unknown as InstalmentRow;
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
