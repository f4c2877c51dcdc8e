/**
 * What the gateway answered for charges, recorded, on the caller's transaction with their account
 * families and the charges locked, set-based: for a batch of answers (one or many, of any
 * tenants), one statement per kind of row: the charge rows, their allocations and transactions,
 * the balances (one per tenant, parents re-summed in one more), the events (said here, recorded
 * by the caller's recorder); then, per charge, what only some need (an ACH settlement job, a
 * receipt) and the listeners of `charge.finished`, all at once. One path for a charge made now,
 * a scheduled charge made on its day, an instalment, and recovery's answer, so all read the same
 * to the user.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { enqueueIn, QUEUES } from '../jobs/queue';
import type { ChargeOutcome as GatewayAnswer } from '../gateway/gateway';
import { announce, announceAll, type Happened } from '../events/listeners';
import { moveBalances, spread, type Family } from './balances';
import { answerCharges, insertMoney, type AnsweredRow, type ChargeRow, type MoneyRow } from '../charge-store/charge-repo';
import type { PaymentDeps } from './payment-deps';
import { chargeMade } from './payment-events';
import { settlementJob } from './ach-settlement';
import { sendToDebtor, type Message } from '../communications/outgoing';
import { tenantKey } from './family-locks';

export interface ChargeOutcome {
  charge: ChargeRow;
  /** Set when the gateway declined: the 400 to answer once the failed charge is committed. */
  declined?: ApiError;
}

/** The columns the gateway's answer decides. */
export type AnsweredValues = Pick<ChargeRow, 'gateway_reference' | 'status' | 'error' | 'error_code' | 'settled_at' | 'settles_at'>;

/** What is recorded for a charge: the gateway's answer, its refusal of the request, or that it never received it. */
export type Answer = GatewayAnswer | 'refused' | 'never_received';

/** What the recording transaction also commits: the caller's own rows (a Portal checkout's events). */
export type Within = (trx: Knex.Transaction, outcome: ChargeOutcome) => Promise<void>;

/** One charge's answer to record: the charge (`processing`, locked) and its account family (locked). */
export interface Recording {
  tenant: Tenant;
  family: Family;
  charge: ChargeRow;
  answer: Answer;
  /** The tenant's time (the sandbox clock in a sandbox). */
  now: Date;
  within?: Within;
}

const REFUSED = 'The payment gateway refused the payment method; no money was moved.';
const NEVER_RECEIVED = 'The payment gateway never received the charge; no money was moved.';

/** What an answer makes of one charge, decided before anything is written. */
interface Decided {
  values: AnsweredValues;
  /** The accounts paid (a charge the gateway took), each with its part. */
  parts: { debt_account_id: string; amount: number }[];
  /** A charge that moved no money: its one transaction of 0, failed. */
  failedRow?: { gateway_reference: string | null };
  declined?: ApiError;
  /** Declined by the gateway (said as `charge.declined`), not released by us. */
  byGateway: boolean;
  /** A pending ACH debit: when to ask for its outcome (its settlement job). */
  checkAfterSeconds?: number;
}

function decide({ family, charge, answer, now }: Recording): Decided {
  if (typeof answer === 'string') {
    // No money moved: the charge fails as a decline would, and what it reserved is free again.
    const message = answer === 'refused' ? REFUSED : NEVER_RECEIVED;
    return {
      values: { status: 'failed', error: message, error_code: 'processing_error', gateway_reference: charge.gateway_reference, settled_at: charge.settled_at, settles_at: charge.settles_at },
      parts: [],
      failedRow: { gateway_reference: null },
      declined: new ApiError('processing_error', message),
      byGateway: false,
    };
  }
  const failed = answer.status === 'failed';
  const values: AnsweredValues = {
    gateway_reference: answer.reference,
    status: failed ? 'failed' : answer.status === 'pending' ? 'pending' : 'succeeded',
    error: failed ? answer.message : null,
    error_code: failed ? answer.code : null,
    settled_at: answer.status === 'succeeded' ? new Date() : null,
    // When to ask for the outcome on the tenant's clock: moving a sandbox clock past it settles the debit.
    settles_at: answer.status === 'pending' ? new Date(now.getTime() + answer.checkAfterSeconds * 1000) : null,
  };
  if (failed) return { values, parts: [], failedRow: { gateway_reference: answer.reference }, declined: new ApiError(answer.code, answer.message), byGateway: true };
  return { values, parts: spread(family, Number(charge.amount)), byGateway: false, checkAfterSeconds: answer.status === 'pending' ? answer.checkAfterSeconds : undefined };
}

/** The accounts a charge's parts moved, then their parents (re-summed): what its `debt-account.update` names. */
function movedBy({ account }: Family, parts: { debt_account_id: string }[]): string[] {
  const ids = [...new Set(parts.map((part) => part.debt_account_id))];
  const parents = ids.map((id) => (id === account.id ? account.parent_id : account.id)).filter((id): id is string => id !== null);
  return [...new Set([...ids, ...parents])];
}

/**
 * Records the answers `items` (each charge `processing`, locked with its family on `trx`);
 * answers each one's outcome, in order. Every charge of a batch is written before any listener
 * runs: the caller puts at most one charge of an account family in a batch where the order of
 * their events matters (charge-answers.ts's rounds).
 */
export async function recordCharges(deps: PaymentDeps, trx: Knex.Transaction, items: Recording[]): Promise<ChargeOutcome[]> {
  if (items.length === 0) return [];
  const decided = items.map(decide);
  const charges = await answerCharges(
    trx,
    items.map((item, index) => ({ id: item.charge.id, ...decided[index]!.values }) satisfies AnsweredRow),
  );
  const money: MoneyRow[] = items.flatMap((item, index): MoneyRow[] => {
    const { parts, failedRow } = decided[index]!;
    const charge = charges[index]!;
    const base = { tenant: item.tenant, charge_id: charge.id, kind: 'charge' as const, gateway_reference: charge.gateway_reference };
    if (failedRow) return [{ ...base, debt_account_id: item.family.account.id, amount: 0, status: 'failed', gateway_reference: failedRow.gateway_reference, allocated: false }];
    return parts.map((part) => ({ ...base, ...part, status: charge.status === 'pending' ? 'pending' : 'succeeded', allocated: true }));
  });
  await insertMoney(trx, money);
  // The balances: one statement per tenant (and one for their parents).
  const byTenant = new Map<string, { tenant: Tenant; deltas: { debt_account_id: string; delta: number }[] }>();
  items.forEach((item, index) => {
    const entry = byTenant.get(tenantKey(item.tenant)) ?? byTenant.set(tenantKey(item.tenant), { tenant: item.tenant, deltas: [] }).get(tenantKey(item.tenant))!;
    entry.deltas.push(...decided[index]!.parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: -part.amount })));
  });
  for (const { tenant, deltas } of byTenant.values()) await moveBalances(trx, tenant, deltas);

  const outcomes: ChargeOutcome[] = charges.map((charge, index) => ({ charge, declined: decided[index]!.declined }));
  const paidAccounts: Happened<'charge.paid-accounts'>[] = [];
  for (const [index, item] of items.entries()) {
    const { tenant, now } = item;
    const { parts, declined, byGateway } = decided[index]!;
    const charge = charges[index]!;
    if (declined) {
      await chargeMade(deps.events, trx, tenant, charge, []);
      if (byGateway) await announce(trx, deps.events, tenant, 'charge.declined', { charge, now });
    } else {
      const moved = movedBy(item.family, parts);
      await chargeMade(deps.events, trx, tenant, charge, moved);
      // A plan's own instalment: the plan's listener of `charge.finished` completes its plan itself.
      if (charge.source !== 'payment_plan') paidAccounts.push({ tenant, what: { accountIds: moved, now, chargeId: charge.id } });
    }
  }
  await announceAll(trx, deps.events, 'charge.paid-accounts', paidAccounts);
  for (const [index, { tenant, now }] of items.entries()) {
    const { declined, checkAfterSeconds } = decided[index]!;
    const charge = charges[index]!;
    if (!declined && checkAfterSeconds !== undefined) await enqueueIn(deps.boss, trx, QUEUES.achSettlement, settlementJob(tenant, charge.id), { startAfter: checkAfterSeconds });
    if (!declined && charge.send_email) await sendToDebtor(deps, trx, tenant, receipt(charge, now));
    if (charge.scheduled_at) await deps.events.record(trx, tenant, [{ name: 'scheduled-charge.update', ids: [charge.id] }]);
  }
  await announceAll(
    trx,
    deps.events,
    'charge.finished',
    items.map((item, index) => ({ tenant: item.tenant, what: { charge: outcomes[index]!.charge, declined: outcomes[index]!.declined, now: item.now } })),
  );
  for (const [index, item] of items.entries()) await item.within?.(trx, outcomes[index]!);
  return outcomes;
}

/**
 * The receipt of a payment made now (in the Portal, or by an agent while the debtor asks) answers
 * the debtor: sent at once, also after an opt-out. The receipt of one they did not make that
 * minute (a scheduled charge, a plan's instalment, an autopay run) is the agency's message:
 * quiet hours and opt-out apply (12 CFR 1006.6(b)(1)(i), 1006.6(e)).
 */
function receipt(charge: ChargeRow, now: Date): Message {
  const unattended = charge.scheduled_at !== null || charge.source === 'payment_plan' || charge.source === 'autopay';
  const amount = (Number(charge.amount) / 100).toFixed(2);
  const method = charge.card ? `card ending ${charge.card.card_number}` : `bank account ${charge.bank_account!.account_number}`;
  const state = charge.status === 'pending' ? 'is being processed' : 'was received';
  return {
    customerId: charge.customer_id,
    debtAccountId: charge.debt_account_id,
    kind: unattended ? 'scheduled_receipt' : 'receipt',
    to: charge.email!,
    now,
    subject: `Payment receipt ${charge.reference_number}`,
    body: `Your payment of $${amount} from your ${method} ${state}. Reference: ${charge.reference_number}.`,
  };
}
