/**
 * The end of an instalment's attempt: its charge's answer was recorded (by the run that made it,
 * or by recovery after a crash), in the transaction that recorded it, which holds the account
 * family's lock (plans and instalments are locked after it, the scheduler's order). A paid
 * attempt moves the plan on; a declined one is retried or defaults the plan (plan-runner.ts).
 * The answers of a batch are finished together, one statement per kind of row: the attempts
 * ended with their plans and instalments locked, the paid instalments marked, the plans updated.
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import { announce, announceAll, type Happened } from '../events/listeners';
import type { Tenant } from '../kernel/tenant';
import { PAYMENT_PLANS, PLAN_CHARGE_ATTEMPTS, PLAN_CHARGES, PLAN_COLUMNS, updatePlans, type InstalmentRow, type PlanRow, type PlanValues } from './plan-repo';
import { afterDecline, afterPayments, type PaidInstalment } from './plan-after';

/** An instalment's columns (InstalmentRow), read beside its plan's. */
const INSTALMENT_COLUMNS = ['id', 'payment_plan_id', 'seq', 'charge_date', 'amount', 'status', 'attempts', 'due_at', 'successfully_charged_at', 'charge_id', 'error', 'error_code', 'created_at', 'updated_at'] as const;

type Finished = Happened<'charge.finished'>;

/** An attempt this batch ends: its plan and instalment, locked. */
interface Ending {
  happened: Finished;
  plan: PlanRow;
  instalment: InstalmentRow;
  attempt: number;
}

/**
 * The attempts the charges of `happened` started, ended (paid or failed) in ONE statement that
 * also locks their plans and instalments (the families are locked already): only an attempt
 * still `started` by that very charge. Answers those to go on with, in the order of `happened`.
 */
async function endAttempts(trx: Knex.Transaction, happened: Finished[]): Promise<Ending[]> {
  const column = <T>(pick: (each: Finished) => T) => happened.map(pick);
  const { rows } = await trx.raw<{ rows: (PlanRow & Record<`instalment_${(typeof INSTALMENT_COLUMNS)[number]}`, unknown> & { started_attempt: number | null })[] }>(
    `WITH v AS (SELECT unnest(?::uuid[]) AS instalment_id, unnest(?::uuid[]) AS charge_id, unnest(?::text[]) AS outcome, unnest(?::uuid[]) AS organization_id, unnest(?::environment[]) AS environment),
     ended AS (
       UPDATE ${PLAN_CHARGE_ATTEMPTS} a SET outcome = v.outcome FROM v
        WHERE a.payment_plan_charge_id = ANY(?::uuid[]) AND a.payment_plan_charge_id = v.instalment_id AND a.charge_id = v.charge_id AND a.outcome = 'started'
       RETURNING a.payment_plan_charge_id, a.attempt)
     SELECT ${PLAN_COLUMNS.join(', ')}, ${INSTALMENT_COLUMNS.map((name) => `i.${name} AS instalment_${name}`).join(', ')},
            (SELECT attempt FROM ended WHERE ended.payment_plan_charge_id = i.id LIMIT 1) AS started_attempt
       FROM ${PAYMENT_PLANS} JOIN ${PLAN_CHARGES} i ON i.payment_plan_id = ${PAYMENT_PLANS}.id
       JOIN v ON v.instalment_id = i.id AND v.organization_id = ${PAYMENT_PLANS}.organization_id AND v.environment = ${PAYMENT_PLANS}.environment
      WHERE i.id = ANY(?::uuid[])
      ORDER BY ${PAYMENT_PLANS}.id, i.id
        FOR UPDATE OF ${PAYMENT_PLANS}, i`,
    [
      column((each) => each.what.charge.payment_plan_charge_id),
      column((each) => each.what.charge.id),
      column((each) => (each.what.charge.status !== 'failed' ? 'paid' : 'failed')),
      column((each) => each.tenant.organizationId),
      column((each) => each.tenant.environment),
      // The instalments again, as index conditions (a join with the unnest alone was planned as a scan of every instalment).
      column((each) => each.what.charge.payment_plan_charge_id),
      column((each) => each.what.charge.payment_plan_charge_id),
    ] as unknown as Knex.RawBinding[],
  );
  const rowOf = new Map(rows.map((row) => [row.instalment_id as string, row]));
  return happened.flatMap((each) => {
    const row = rowOf.get(each.what.charge.payment_plan_charge_id!);
    if (!row || row.started_attempt == null) return [];
    const plan = Object.fromEntries(Object.entries(row).filter(([key]) => !key.startsWith('instalment_') && key !== 'started_attempt')) as unknown as PlanRow;
    const instalment = Object.fromEntries(INSTALMENT_COLUMNS.map((name) => [name, row[`instalment_${name}`]])) as unknown as InstalmentRow;
    return [{ happened: each, plan, instalment, attempt: row.started_attempt }];
  });
}

/** Finishes the attempts of the plans' charges among `happened` (a batch of answers; any other charge is not theirs). */
export async function finishInstalments(trx: Knex.Transaction, events: EventRecorder, happened: Finished[]): Promise<void> {
  const ours = happened.filter(({ what }) => what.charge.source === 'payment_plan' && what.charge.payment_plan_charge_id);
  // Two answers of one instalment in a batch (never in the due work's flow): one after the other.
  const seen = new Set<string>();
  const now = ours.filter(({ what }) => !seen.has(what.charge.payment_plan_charge_id!) && seen.add(what.charge.payment_plan_charge_id!));
  if (now.length === 0) return;
  await finishTogether(trx, events, now);
  const later = ours.filter((each) => !now.includes(each));
  if (later.length > 0) await finishInstalments(trx, events, later);
}

async function finishTogether(trx: Knex.Transaction, events: EventRecorder, happened: Finished[]): Promise<void> {
  // A plan canceled while its instalment was in flight: the charge stands, the plan stays as it is.
  const ending = (await endAttempts(trx, happened)).filter(({ plan, instalment }) => plan.status === 'active' && instalment.status === 'pending');
  const paid = ending.filter(({ happened: { what } }) => what.charge.status !== 'failed');
  // What the plan runner says of an instalment it finishes at once, said here too (settlement offers listen).
  await announceAll(
    trx,
    events,
    'instalment.paid',
    paid.map(({ happened: { tenant, what }, plan }) => ({ tenant, what: { accountIds: [plan.debt_account_id], chargeId: what.charge.id, now: what.now } })),
  );
  const afterPaid = await afterPayments(
    trx,
    paid.map(({ happened: { tenant, what }, plan, instalment, attempt }): PaidInstalment => ({ tenant, plan, instalment, amount: Number(what.charge.amount), attempt, chargeId: what.charge.id, now: what.now })),
  );
  const changesOf = new Map<Ending, PlanValues>(paid.map((each, index) => [each, afterPaid[index]!]));
  const updates: { tenant: Tenant; planId: string; changes: PlanValues }[] = [];
  for (const each of ending) {
    const { happened: { tenant, what }, plan, instalment, attempt } = each;
    const { charge, declined, now } = what;
    const outcome = { chargeId: charge.id, paid: charge.status !== 'failed', error: declined?.message ?? charge.error ?? undefined, errorCode: declined?.errorCode ?? charge.error_code ?? undefined };
    const changes = changesOf.get(each) ?? (await afterDecline(trx, tenant, plan, instalment, attempt, outcome, now));
    if (changes.status === 'defaulted') await announce(trx, events, tenant, 'plan.defaulted', { planId: plan.id, accountId: plan.debt_account_id, now });
    updates.push({ tenant, planId: plan.id, changes });
  }
  await updatePlans(trx, updates);
  for (const { happened: { tenant }, plan } of ending) await events.record(trx, tenant, [{ name: 'payment-plan.update', ids: [plan.debt_account_id] }]);
}
