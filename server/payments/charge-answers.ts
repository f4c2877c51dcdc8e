/**
 * Step 3 of the API's charges in batches (group commit): the gateway's answers to concurrent
 * `POST /charges` that arrive while a batch is being recorded are recorded together in the next,
 * in one short transaction (`recordAnswers`, as the due work records its instalments' answers):
 * one lock pass, one events record with its payloads read once for the batch. Each request still
 * gets its own charge's outcome and its own events, in the order they were said; a batch that
 * fails is run again item by item (kernel/batcher.ts), so one bad item fails only itself.
 *
 * Two answers of one account family never go in one transaction: the events of a batch are built
 * as it commits, and one charge's `debt-account.update` must show the balance as that charge left
 * it, not as a later charge of the same family did. A batch is cut into rounds, each with at most
 * one answer per family (in the order they came), each round its own transaction.
 */
import type { Tenant } from '../kernel/tenant';
import { batcher, type Batcher } from '../kernel/batcher';
import { recordAnswers, type Answer, type AnswerOf } from './charge-steps';
import type { ChargeOutcome } from './charge-outcome';
import { familyKey } from './family-locks';
import type { PaymentDeps } from './payment-deps';

/** One answer to record, with the head of its account family (the parent, or the account itself). */
export interface FamilyAnswer extends AnswerOf {
  head: string;
}

/** Cuts `items` into rounds with at most one item per family head each, keeping their order. */
export function roundsOf<T extends { tenant: Tenant; head: string }>(items: T[]): T[][] {
  const rounds: T[][] = [];
  const taken: Set<string>[] = [];
  for (const item of items) {
    const key = familyKey(item.tenant, item.head);
    let round = taken.findIndex((heads) => !heads.has(key));
    if (round === -1) {
      round = rounds.length;
      rounds.push([]);
      taken.push(new Set());
    }
    rounds[round]!.push(item);
    taken[round]!.add(key);
  }
  return rounds;
}

/** Records the answers round by round (each round one transaction); answers each item's outcome in order. */
async function recordInRounds(deps: PaymentDeps, items: FamilyAnswer[]): Promise<(ChargeOutcome | undefined)[]> {
  const outcomes = new Map<FamilyAnswer, ChargeOutcome | undefined>();
  for (const round of roundsOf(items)) {
    const recorded = await recordAnswers(deps, round.map(({ head: _head, ...entry }) => entry));
    round.forEach((item, index) => outcomes.set(item, recorded[index]));
  }
  return items.map((item) => outcomes.get(item));
}

/**
 * Batches of answers recorded at once per process. Each takes one of the write slots
 * (write-slots.ts) while it commits; the other slots stay for reservations. Four measured
 * better than the due work's two under bench:charges (the README's table).
 */
const ANSWER_BATCHES = 4;

// One batcher per app's dependencies (the service is made once per app).
const batchers = new WeakMap<PaymentDeps, Batcher<FamilyAnswer, ChargeOutcome | undefined>>();

/**
 * Step 3 for the API's charge `chargeId` on the family under `head`, recorded with the answers
 * that arrive together; undefined when there is no such charge.
 */
export function recordInBatch(deps: PaymentDeps, tenant: Tenant, head: string, chargeId: string, answer: Answer, now: Date): Promise<ChargeOutcome | undefined> {
  let answers = batchers.get(deps);
  if (!answers) {
    answers = batcher<FamilyAnswer, ChargeOutcome | undefined>((items) => recordInRounds(deps, items), { parallel: ANSWER_BATCHES });
    batchers.set(deps, answers);
  }
  return answers.add({ tenant, head, chargeId, answer, now });
}
