/**
 * POST /charges as a story: check the request, tokenize inline details, then in one short
 * transaction lock the account family, check the amount against what can still be charged and
 * reserve it (the charge stored `processing`); commit; ask the gateway holding nothing; record
 * the answer in a second transaction (charge-steps.ts). A declined card is stored as a failed
 * charge, and answered 400 after the commit.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { ownerOf, paymentMethodValues, tokenize } from '../payment-methods/payment-method-service';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import type { PaymentOwner } from '../gateway/gateway';
import type { LockedFamily } from './balances';
import { chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import type { PaymentGateway } from '../gateway/gateway';
import type { PaymentDeps } from './payment-deps';
import type { ChargeOutcome } from './charge-outcome';
import { askAndRecord, type Answer } from './charge-steps';
import { recordInBatch } from './charge-answers';
import { reserveInBatch } from './charge-reservations';
import { UUID } from '../db/tenant';
import { moneyWrites } from './write-slots';
import { scheduleCharge } from './scheduled-charges';
import { nowFor } from '../kernel/clock';
import { todayUtc } from '../kernel/dates';
import type { Channel } from '../payment-terms/payment-terms';
import { intentErrors, laterDayOf, throwIfAny } from '../payment-terms/payment-intent';
import type { IdempotencyScope } from '../idempotency/request-fingerprint';
import { answerEarlier, chargeOfRace, earlierCharge } from './charge-idempotency';
import { intentOf, plan, type Origin, type Prepared } from './charge-plan';
import { reserving } from './reserve-batch';

type ChargeCreate = components['schemas']['ChargeCreate'];

export type { ChargeOutcome };

/** Who asks for the charge beyond the API's caller, and what must commit with it. */
export interface ChargeContext {
  /** Whose windows of time apply (payment-terms.ts); the API's by default. */
  channel?: Channel;
  /** A guest of the Portal: pays once, today, with a new card or bank account. */
  guest?: boolean;
  /**
   * Runs in the transaction that records the gateway's answer (also a declined one), or the one
   * that schedules a later day's charge: what must commit with it. Not run for a charge that
   * recovery finishes after a crash.
   */
  within?: (trx: Knex.Transaction, outcome: ChargeOutcome) => Promise<void>;
  /** Who the charge is for when not the API's caller (a settlement offer): its `source` from the reservation on. */
  source?: 'settlement_offer';
  /**
   * Run in the transaction that reserves the charge (`processing`) or stores it `scheduled`:
   * `before` first (what decides the terms the charge is checked against: a settlement offer's
   * move to `accepted`), `reserved` once the charge is stored (its link; what the caller keeps so
   * that the answer, whoever records it - recovery too - is followed up through `charge.finished`). What must commit with
   * the reservation, before the gateway is asked; throwing rolls the reservation back.
   */
  before?: (trx: Knex.Transaction) => Promise<void>;
  reserved?: (trx: Knex.Transaction, charge: ChargeRow) => Promise<void>;
}


/**
 * A charge reserved (`processing`, to ask the gateway for; `head`: its account family's head, the
 * parent or the account itself) or stored `scheduled` (nothing to ask).
 */
export type Reservation = { charge: ChargeRow; token: string; head: string } | { scheduled: ChargeOutcome };

export async function createCharge(
  deps: PaymentDeps,
  gateway: PaymentGateway,
  tenant: Tenant,
  body: ChargeCreate,
  idempotency: IdempotencyScope | undefined,
  /** Who made the charge when not the API's caller: a plan's instalment. */
  origin?: Origin,
  context: ChargeContext = {},
): Promise<ChargeOutcome> {
  const now = nowFor(deps.clock, tenant);
  const at = { channel: context.channel ?? 'api', today: todayUtc(now) } as const;
  origin ??= context.source ? { source: context.source, payment_plan_id: null, payment_plan_charge_id: null } : undefined;
  const intent = intentOf(body, origin, context);
  throwIfAny(intentErrors(intent, at));
  const inline = body.card ? { card: body.card } : body.ach ? { ach: body.ach } : undefined;
  const later = laterDayOf(body, at.today);
  // The API's own charge made now (nothing of the caller's to commit with it, no method to
  // save, the account by id) is reserved with those asked together (charge-reservations.ts).
  const together = !context.before && !context.reserved && !context.within && !origin && !later && !(inline && body.save_payment_method) && UUID.test(body.debt_account_id);
  // The key's earlier charge: looked for by the batch itself when nothing is asked of the gateway
  // before it (a saved method), else here, before the inline details are tokenized.
  if (idempotency && !(together && !inline)) {
    const earlier = await earlierCharge(deps.db, tenant, idempotency, deps.config.gatewayAnswerWaitMs);
    if (earlier) return earlier;
  }
  const prepared: Prepared = {
    body,
    intent,
    origin,
    idempotency,
    now,
    later,
    inlineValues: inline && paymentMethodValues(inline, deps.secrets, now),
    // A method to save is kept under the debtor at a processor that keeps customers (Stripe), so it can be charged again with no one present.
    inlineToken: inline && (await tokenize(gateway, inline, body.save_payment_method ? await accountOwner(deps, tenant, body.debt_account_id) : undefined)),
    reserved: context.reserved,
  };
  let reservation: Reservation;
  try {
    if (together) {
      const reserved = await reserveInBatch(deps, { tenant, accountId: body.debt_account_id, gateway, prepared }, reserving(deps));
      // The key made a charge already: answered as earlierCharge answers it.
      if ('earlier' in reserved) return await answerEarlier(deps.db, tenant, idempotency!, reserved.earlier, deps.config.gatewayAnswerWaitMs);
      reservation = reserved;
    } else {
      reservation = await moneyWrites(deps.db, () => deps.db.transaction(async (trx) => {
          await context.before?.(trx);
          const reserved = await reserve(deps, trx, tenant, gateway, prepared);
          if ('scheduled' in reserved) await context.within?.(trx, reserved.scheduled);
          return reserved;
        }));
    }
  } catch (error) {
    // Two requests of one caller with one key that both got past the checks before: the
    // database lets one reservation through, before any gateway is asked; the other answers
    // it only if it is the same request (409 while it is still being made).
    return chargeOfRace(deps.db, tenant, idempotency, error, deps.config.gatewayAnswerWaitMs);
  }
  if ('scheduled' in reservation) return reservation.scheduled;
  const { charge, token, head } = reservation;
  // The API's own charge (nothing of the caller's to commit with the answer) has its answer
  // recorded with those that arrive together (group commit, charge-answers.ts).
  const record = !context.within && !origin ? (answer: Answer) => recordInBatch(deps, tenant, head, charge.id, answer, now) : undefined;
  return askAndRecord(deps, gateway, tenant, charge, token, { now, within: context.within, record });
}

/** The customer of the account `accountKey`, as the owner of a method saved with a charge. */
async function accountOwner(deps: PaymentDeps, tenant: Tenant, accountKey: string): Promise<PaymentOwner | undefined> {
  const account = await debtAccountRepo(deps.db, tenant).find(accountKey);
  return account ? ownerOf(deps.db, tenant, account.customer_id) : undefined;
}

/**
 * Step 1 of an instalment's charge, on the plan runner's transaction (which holds the account's
 * lock): the charge checked and reserved. The caller asks the gateway after its commit
 * (`askAndRecord`). Throws the ApiError of a rule that refuses it (an expired card).
 */
export async function reserveOn(
  deps: PaymentDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  gateway: PaymentGateway,
  body: ChargeCreate,
  origin: Origin,
  /** The family of `body.debt_account_id` as the caller locked it on `trx`, if it did. */
  family?: LockedFamily,
): Promise<{ charge: ChargeRow; token: string; head: string }> {
  const now = nowFor(deps.clock, tenant);
  const intent = intentOf(body, origin, {});
  throwIfAny(intentErrors(intent, { channel: 'api', today: todayUtc(now) }));
  const reserved = await reserve(deps, trx, tenant, gateway, { body, intent, origin, idempotency: undefined, now, later: undefined, inlineValues: undefined, inlineToken: undefined, family });
  if ('scheduled' in reserved) throw new Error('An instalment is never scheduled for a later day');
  return reserved;
}

/** Locks the account family, checks the terms against what can still be charged, and stores the charge. */
async function reserve(deps: PaymentDeps, trx: Knex.Transaction, tenant: Tenant, gateway: PaymentGateway, prepared: Prepared): Promise<Reservation> {
  const { values, token, head } = await plan(deps, trx, tenant, gateway, prepared);
  const { later, reserved } = prepared;
  if (later) return { scheduled: { charge: await scheduleCharge(deps, trx, tenant, values, later, reserved && ((stored) => reserved(trx, stored))) } };
  const charge = await chargeRepo(trx, tenant).insert(values);
  await reserved?.(trx, charge);
  return { charge, token, head };
}
