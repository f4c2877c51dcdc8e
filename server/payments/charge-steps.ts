/**
 * A charge in steps around the gateway, which is slow and outside our database:
 * 1. reserve (the caller's short transaction: the terms checked under the account's lock, the
 *    charge stored `processing`, counted against what can still be charged);
 * 2. ask the gateway by the charge's id, holding no transaction, connection or lock;
 * 3. record the answer in a second short transaction (`recordAnswer`), which does nothing when
 *    the charge is no longer `processing`: whoever records first (this request, its late
 *    answer, or recovery) is the only one.
 * What stays `processing` (a crash, a lost or late answer) is finished by charge-recovery.ts.
 */
import { countChargesAnswered } from '../observability/metrics';
import type { Knex } from 'knex';
import type { Config } from '../kernel/config';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type ErrorCode } from '../kernel/errors';
import { GatewayRateLimited, GatewayRefusal, GatewayUnanswered, type ChargeOutcome as GatewayAnswer, type PaymentGateway } from '../gateway/gateway';
import { CHARGE_COLUMNS, CHARGES, type ChargeRow } from '../charge-store/charge-repo';
import type { EventRecorder, RecordedEvent } from '../events/events';
import { lockFamilies, tenantKey } from './family-locks';
import { recordCharges, type Answer, type ChargeOutcome, type Recording, type Within } from './charge-outcome';
import type { PaymentDeps } from './payment-deps';
import { moneyWrites } from './write-slots';

export type { Answer, Within };

/** The steps a test may stop a process at (TEST_CHARGE_STEP): after the reservation commits, after the answer, after it is recorded. */
export type ChargeStep = 'reserved' | 'answered' | 'recorded';

/**
 * Test only: pause here (forever, saying so on stderr) or die at once (SIGKILL), so that crash
 * tests can kill a real server between the steps.
 */
export async function atStep(config: Config, step: ChargeStep, charge: ChargeRow): Promise<void> {
  const hook = config.testChargeSteps.find((each) => each.step === step && (each.cents === undefined || each.cents === Number(charge.amount)));
  if (!hook) return;
  if (hook.action === 'die') process.kill(process.pid, 'SIGKILL');
  process.stderr.write(`TEST_CHARGE_STEP paused at ${step} ${charge.id}\n`);
  await new Promise(() => {});
}

/** The outcome a finished charge answered (a decline as its 400 again); a `processing` one as itself. */
export function outcomeOf(charge: ChargeRow): ChargeOutcome {
  if (charge.status === 'failed' && charge.error_code) return { charge, declined: new ApiError(charge.error_code as ErrorCode, charge.error ?? 'The payment was declined.') };
  return { charge };
}

/**
 * Steps 2 and 3 for the reserved `charge`: asks the gateway, then records its answer. When the
 * answer takes longer than GATEWAY_ANSWER_WAIT_MS (or is lost), answers the charge still
 * `processing`; a late answer is recorded when it comes, a lost one by recovery.
 */
export async function askAndRecord(
  deps: PaymentDeps,
  gateway: PaymentGateway,
  tenant: Tenant,
  charge: ChargeRow,
  token: string,
  at: {
    now: Date;
    within?: Within;
    waitMs?: number;
    /** Step 3 in a batch of answers (the due work's group commit, `recordAnswers`); by default `recordAnswer` alone. */
    record?: (answer: Answer) => Promise<ChargeOutcome | undefined>;
  },
): Promise<ChargeOutcome> {
  await atStep(deps.config, 'reserved', charge);
  const asked = ask(deps, gateway, token, charge).then(async (answer) => {
    if (!answer) return undefined;
    await atStep(deps.config, 'answered', charge);
    const outcome = at.record ? await at.record(answer) : await recordAnswer(deps, tenant, charge.id, answer, at.now, at.within);
    await atStep(deps.config, 'recorded', charge);
    return outcome;
  });
  const waitMs = at.waitMs ?? deps.config.gatewayAnswerWaitMs;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'late'>((done) => {
    timer = setTimeout(() => done('late'), waitMs);
  });
  try {
    const first = await Promise.race([asked, gaveUp]);
    if (first === 'late') {
      asked.catch((error) => deps.logger?.warn({ err: error, chargeId: charge.id }, 'a late gateway answer could not be recorded; recovery will'));
      return { charge };
    }
    return first ?? { charge };
  } finally {
    clearTimeout(timer);
  }
}

/** No payer is present: an instalment, autopay, a scheduled charge on its day. */
const offSession = (charge: ChargeRow) => charge.source === 'payment_plan' || charge.source === 'autopay' || charge.scheduled_at !== null;

/**
 * Records the processor's id of the payment on the charge while it is `processing` and has no
 * other id (one statement, nothing held): answers false when the charge was finished meanwhile,
 * so the processor must not go on to take the money.
 */
async function recordReference(deps: PaymentDeps, charge: ChargeRow, reference: string): Promise<boolean> {
  const updated = await deps.db(CHARGES).where({ id: charge.id, status: 'processing' }).where((where) => where.whereNull('gateway_reference').orWhere('gateway_reference', reference)).update({ gateway_reference: reference });
  return updated > 0;
}

/** The gateway's answer; undefined when none came (the charge stays `processing` for recovery). */
async function ask(deps: PaymentDeps, gateway: PaymentGateway, token: string, charge: ChargeRow): Promise<GatewayAnswer | 'refused' | undefined> {
  try {
    return await gateway.charge(token, Number(charge.amount), charge.id, { offSession: offSession(charge), recordReference: (reference) => recordReference(deps, charge, reference) });
  } catch (error) {
    // The gateway refused the request itself (a token it does not know): nothing was taken.
    if (error instanceof GatewayRefusal) return 'refused';
    // No answer, or the processor kept saying "too many requests": never a decline by guess; recovery asks by key.
    if (error instanceof GatewayUnanswered || error instanceof GatewayRateLimited) return undefined;
    throw error;
  }
}

/**
 * Step 3: records `answer` for the `processing` charge `chargeId` under the account family's
 * lock (succeeded or pending: transactions, balances, events; failed or never received: the
 * reservation released). A charge that is no longer `processing` was recorded by someone else:
 * its outcome is answered as it is. Announces `charge.finished` (a plan's instalment follows it).
 * A batch of one of `recordAnswers`: one path for every answer.
 */
export async function recordAnswer(
  deps: PaymentDeps,
  tenant: Tenant,
  chargeId: string,
  answer: Answer,
  now: Date,
  within?: Within,
  ifReference?: string | null,
): Promise<ChargeOutcome | undefined> {
  // Its events recorded as they are said (a failed offer's charge names the offer it was to pay, before the offer moves).
  const [outcome] = await recordAnswers(deps, [{ tenant, chargeId, answer, now, within, ifReference }], { together: false });
  return outcome;
}

/** One answer to record in a batch (`recordAnswers`). */
export interface AnswerOf {
  tenant: Tenant;
  chargeId: string;
  answer: Answer;
  now: Date;
  /** What must commit with this answer (not run when the charge was recorded already). */
  within?: Within;
  /**
   * Recovery's "never received": recorded only while the charge's processor id is still this
   * (none, when it asked by key). One recorded meanwhile means a request of it reached the
   * processor after all: the charge stays `processing`, asked again by that id.
   */
  ifReference?: string | null;
}

/**
 * Step 3 for many charges at once (the due work's answers that arrive close together, the API's
 * batched answers, or one), in ONE short transaction: their account families locked at once in
 * one fixed order (family-locks.ts, as the due work's starts lock), then the charges, then the
 * answers of those still `processing` recorded set-based (charge-outcome.ts `recordCharges`: one
 * statement per kind of row). The events of the batch are recorded together at its end, one
 * record per tenant (one read of the payloads for all), in the order they were said. Answers each
 * charge's outcome in order (undefined: no such charge).
 */
export async function recordAnswers(
  deps: PaymentDeps,
  entries: AnswerOf[],
  /** false: the events recorded as they are said, not at the batch's end (`recordAnswer`, a charge alone). */
  { together = true }: { together?: boolean } = {},
): Promise<(ChargeOutcome | undefined)[]> {
  // The charges this call recorded, counted once their transaction committed.
  let answered: ChargeRow[] = [];
  const outcomes = await moneyWrites(deps.db, () =>
    deps.db.transaction(async (trx) => {
      const { rows: peeks } = await trx.raw<{ rows: { id: string; debt_account_id: string; organization_id: string; environment: string }[] }>(
        `SELECT id, debt_account_id, organization_id, environment FROM ${CHARGES} WHERE id = ANY(?::uuid[])`,
        [entries.map((entry) => entry.chargeId)],
      );
      const peekOf = new Map(peeks.map((peek) => [peek.id, peek]));
      // Each charge's family under an entry of its own tenant (an entry of another tenant finds nothing).
      const tenantOf = (peek: (typeof peeks)[number]) =>
        entries.find((entry) => entry.chargeId === peek.id && entry.tenant.organizationId === peek.organization_id && entry.tenant.environment === peek.environment)?.tenant;
      const families = await lockFamilies(
        trx,
        peeks.flatMap((peek) => {
          const tenant = tenantOf(peek);
          return tenant ? [{ tenant, accountId: peek.debt_account_id }] : [];
        }),
        // Recording needs no terms (what is reserved, the dispute hold's fact).
        { terms: false },
      );
      // Then the charges, by id, in one statement (each checked to be its entry's tenant's).
      const locked = (await trx(CHARGES)
        .whereIn(`${CHARGES}.id`, [...peekOf.keys()])
        .orderBy(`${CHARGES}.id`)
        .forUpdate()
        .select([...CHARGE_COLUMNS, `${CHARGES}.organization_id`, `${CHARGES}.environment`])) as (ChargeRow & { organization_id: string; environment: string })[];
      const chargeOf = new Map(locked.map(({ organization_id, environment, ...charge }) => [charge.id, { charge: charge as ChargeRow, organization_id, environment }]));
      const outcomes: (ChargeOutcome | undefined)[] = [];
      const recordings: { index: number; recording: Recording }[] = [];
      const twice: { index: number; first: number }[] = [];
      const taken = new Map<string, number>();
      for (const entry of entries) {
        const peek = peekOf.get(entry.chargeId);
        const family = peek && families.get(peek.debt_account_id);
        const found = chargeOf.get(entry.chargeId);
        const ours = found && found.organization_id === entry.tenant.organizationId && found.environment === entry.tenant.environment;
        if (!family || !ours) outcomes.push(undefined);
        // Recorded by someone else already: answered as it is.
        else if (found.charge.status !== 'processing') outcomes.push(outcomeOf(found.charge));
        // A processor id recorded since recovery asked: not given up on (it is asked again by that id).
        else if (entry.ifReference !== undefined && found.charge.gateway_reference !== entry.ifReference) outcomes.push(outcomeOf(found.charge));
        // Named twice in this batch: recorded once, both answered its outcome.
        else if (taken.has(found.charge.id)) {
          twice.push({ index: outcomes.length, first: taken.get(found.charge.id)! });
          outcomes.push(undefined);
        } else {
          taken.set(found.charge.id, outcomes.length);
          recordings.push({ index: outcomes.length, recording: { tenant: entry.tenant, family, charge: found.charge, answer: entry.answer, now: entry.now, within: entry.within } });
          outcomes.push(undefined);
        }
      }
      const batchEvents = together ? deferredEvents(deps.events) : undefined;
      const recorded = await recordCharges(batchEvents ? { ...deps, events: batchEvents.recorder } : deps, trx, recordings.map((each) => each.recording));
      recordings.forEach(({ index }, at) => (outcomes[index] = recorded[at]));
      answered = recorded.flatMap((outcome) => (outcome ? [outcome.charge] : []));
      for (const { index, first } of twice) outcomes[index] = outcomes[first];
      await batchEvents?.flush(trx);
      return outcomes;
    }),
  );
  countChargesAnswered(answered);
  return outcomes;
}

/**
 * An events recorder that keeps what is said and records it at `flush`, one record per tenant,
 * in the order said: a batch's payloads read once, as the batch commits.
 */
function deferredEvents(events: EventRecorder): { recorder: EventRecorder; flush: (trx: Knex.Transaction) => Promise<void> } {
  const said = new Map<string, { tenant: Tenant; events: RecordedEvent[] }>();
  return {
    recorder: {
      async record(_trx, tenant, recorded) {
        const key = tenantKey(tenant);
        const entry = said.get(key) ?? said.set(key, { tenant, events: [] }).get(key)!;
        entry.events.push(...recorded);
      },
    },
    async flush(trx) {
      for (const { tenant, events: recorded } of said.values()) await events.record(trx, tenant, recorded);
    },
  };
}
