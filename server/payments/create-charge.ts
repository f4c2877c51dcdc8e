/**
 * POST /charges as a story: check the request, tokenize inline details, then in one short
 * transaction lock the account family, check the amount against what can still be charged and
 * reserve it (the charge stored `processing`); commit; ask the gateway holding nothing; record
 * the answer in a second transaction (charge-steps.ts). A declined card is stored as a failed
 * charge, and answered 400 after the commit.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { groupBy } from '../collections';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { bankAccount, cardToken } from '../masking';
import { paymentMethodRepo, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { paymentMethodValues, tokenize } from '../payment-methods/payment-method-service';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { lockAccount, type LockedFamily } from './balances';
import { chargeRepo, type ChargeRow, type ChargeValues } from '../charge-store/charge-repo';
import type { PaymentGateway } from '../gateway/gateway';
import type { PaymentDeps } from './payment-deps';
import { paymentMethodSaved } from './payment-events';
import type { AnsweredValues, ChargeOutcome } from './charge-outcome';
import { askAndRecord, type Answer } from './charge-steps';
import { recordInBatch } from './charge-answers';
import { reserveInBatch, type Reserving } from './charge-reservations';
import { tenantKey } from './family-locks';
import { UUID } from '../db/tenant';
import { moneyWrites } from './write-slots';
import { scheduleCharge } from './scheduled-charges';
import { nowFor } from '../kernel/clock';
import { todayUtc } from '../dates';
import { termsOf, type Channel } from '../payment-terms/payment-terms';
import { amountErrors, intentErrors, laterDayOf, throwIfAny, throwIfDisputed } from '../payment-terms/payment-intent';
import { scopeText, type IdempotencyScope } from '../idempotency/request-fingerprint';
import { answerEarlier, chargeOfRace, earlierCharge, keyColumns } from './charge-idempotency';

type ChargeCreate = components['schemas']['ChargeCreate'];


/** CH- and ten letters and digits without look-alikes: about 50 bits, unique per tenant by index. */
function referenceNumber(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return `CH-${[...randomBytes(10)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

/** The saved method `id` of the customer, read here or, in a batch, read already (`read`: the batch's methods by id). */
async function savedMethod(trx: Knex, tenant: Tenant, id: string, customerId: string, now: Date, read?: Map<string, PaymentMethodRow>): Promise<PaymentMethodRow> {
  const method = read ? read.get(id) : await paymentMethodRepo(trx, tenant).find(id);
  if (!method || method.customer_id !== customerId) throw ApiError.field('payment_method_id', "is not a payment method of the account's customer");
  if (!method.gateway_token) {
    throw ApiError.field('payment_method_id', 'was saved before payments were taken and has no gateway token; send the card or bank account again');
  }
  if (!isChargeable(method, now)) throw ApiError.field('payment_method_id', 'the card has expired');
  return method;
}

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

export type Origin = Pick<ChargeRow, 'source' | 'payment_plan_id' | 'payment_plan_charge_id'>;

/** A request checked and its inline details tokenized, ready to reserve. */
export interface Prepared {
  body: ChargeCreate;
  intent: ReturnType<typeof intentOf>;
  origin: Origin | undefined;
  idempotency: IdempotencyScope | undefined;
  now: Date;
  later: string | undefined;
  inlineValues: ReturnType<typeof paymentMethodValues> | undefined;
  inlineToken: string | null | undefined;
  /** The account family the caller already locked on this transaction (a plan's instalment). */
  family?: LockedFamily;
  /** ChargeContext.reserved: run once the charge is stored, before any event names it. */
  reserved?: ChargeContext['reserved'];
  /** In a batch: the saved methods the batch read for its charges, by id. */
  methods?: Map<string, PaymentMethodRow>;
  /**
   * In a batch whose charges are stored together at its end: the cents that its earlier charges
   * reserved on the family of `head` (its head's id), not stored yet. They count as the family's
   * reservations, as they will once stored.
   */
  pending?: (head: string) => number;
}

export const intentOf = (body: ChargeCreate, origin: Origin | undefined, context: ChargeContext) => ({ ...body, instalment: origin?.source === 'payment_plan', guest: context.guest });

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
    inlineToken: inline && (await tokenize(gateway, inline)),
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

/** One API charge of a reservation batch. */
interface BatchItem {
  tenant: Tenant;
  accountId: string;
  gateway: PaymentGateway;
  prepared: Prepared;
}

/** A charge of a batch checked, to store: its values, and what asking the gateway needs. */
interface Planned {
  tenant: Tenant;
  values: ChargeValues;
  token: string;
  head: string;
}

/** What a batch reads for its charges: by tenant, the earlier charges of their keys (by scope and key) and their saved methods. */
type BatchRead = Map<string, { earlier: Map<string, ChargeRow>; methods: Map<string, PaymentMethodRow> }>;

const keyOf = (scope: string, key: string) => `${scope}\n${key}`;

/**
 * The API's charges reserved in batches (charge-reservations.ts): the batch reads the earlier
 * charges of their keys and their saved methods (one statement each per tenant), checks each
 * charge as `reserve` does, and stores the charges in one insert per tenant. A charge whose key
 * made one already answers `{ earlier }` instead.
 */
const reserving = (deps: PaymentDeps): Reserving<BatchItem, BatchRead, Planned, { charge: ChargeRow; token: string; head: string } | { earlier: ChargeRow }> => ({
  async read(trx, items) {
    const read: BatchRead = new Map();
    for (const [key, ofTenant] of groupBy(items, (item) => tenantKey(item.tenant))) {
      const { tenant } = ofTenant[0]!;
      const keys = ofTenant.flatMap(({ prepared: { idempotency, inlineValues } }) => (idempotency && !inlineValues ? [{ scope: scopeText(idempotency), key: idempotency.key }] : []));
      const methodIds = [...new Set(ofTenant.flatMap(({ prepared: { body } }) => (body.payment_method_id ? [body.payment_method_id] : [])))];
      const earlier = await chargeRepo(trx, tenant).findByIdempotencyKeys(keys);
      const methods = await paymentMethodRepo(trx, tenant).findMany(methodIds.filter((id) => UUID.test(id)));
      read.set(key, {
        earlier: new Map(earlier.map((charge) => [keyOf(charge.idempotency_scope!, charge.idempotency_key!), charge])),
        methods: new Map(methods.map((method) => [method.id, method])),
      });
    }
    return read;
  },
  async check(trx, item, family, read) {
    const { earlier, methods } = read.get(tenantKey(item.tenant))!;
    const { idempotency } = item.prepared;
    const made = idempotency && !item.prepared.inlineValues ? earlier.get(keyOf(scopeText(idempotency), idempotency.key)) : undefined;
    if (made) return { answer: { earlier: made } };
    const planned = await plan(deps, trx, item.tenant, item.gateway, { ...item.prepared, family, methods });
    return { store: { tenant: item.tenant, ...planned } };
  },
  async store(trx, plans) {
    const stored = new Map<Planned, ChargeRow>();
    for (const [, ofTenant] of groupBy(plans, (each) => tenantKey(each.tenant))) {
      const rows = await chargeRepo(trx, ofTenant[0]!.tenant).insertMany(ofTenant.map((each) => each.values));
      ofTenant.forEach((each, index) => stored.set(each, rows[index]!));
    }
    return plans.map((each) => ({ charge: stored.get(each)!, token: each.token, head: each.head }));
  },
});

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

/**
 * Locks the account family, checks the terms against what can still be charged (saving the
 * inline method when asked), and answers the charge to store (`processing`), with the token
 * to charge and its family's head.
 */
export async function plan(deps: PaymentDeps, trx: Knex.Transaction, tenant: Tenant, gateway: PaymentGateway, prepared: Prepared): Promise<{ values: ChargeValues; token: string; head: string }> {
  const { body, intent, origin, idempotency, now, inlineValues, inlineToken, methods } = prepared;
  // Saving a method locks the customer (as saving one directly does); taking it before the
  // accounts keeps one lock order, customer then accounts, for every charge.
  if (inlineValues && body.save_payment_method) {
    const peek = await debtAccountRepo(trx, tenant).find(body.debt_account_id);
    if (peek) await customerRepo(trx, tenant).find(peek.customer_id, { forUpdate: true });
  }
  const family = prepared.family?.account.id === body.debt_account_id ? prepared.family : await lockAccount(trx, tenant, body.debt_account_id);
  if (!family) throw ApiError.field('debt_account_id', 'does not exist');
  const { account: locked } = family;
  const pending = prepared.pending?.(locked.parent_id ?? locked.id) ?? 0;
  const account = pending > 0 ? { ...locked, reserved_amount: locked.reserved_amount + pending } : locked;
  const terms = termsOf(account);
  throwIfDisputed(terms, body.amount);
  throwIfAny(amountErrors(terms, intent));

  let method = body.payment_method_id ? await savedMethod(trx, tenant, body.payment_method_id, account.customer_id, now, methods) : undefined;
  if (inlineValues && body.save_payment_method) {
    const saved = paymentMethodRepo(trx, tenant);
    const first = !(await saved.hasAny(account.customer_id));
    method = await saved.insert(account.customer_id, { ...inlineValues, gateway_token: inlineToken!, is_primary: first });
    await paymentMethodSaved(deps.events, trx, tenant, account.customer_id);
  }
  const shown = method ?? ({ ...inlineValues, created_at: new Date(), updated_at: new Date() } as PaymentMethodRow);
  const token = method?.gateway_token ?? inlineToken!;

  // The customer's e-mail by default, read by the insert itself (no round trip of its own under the lock).
  const email = body.email ?? (trx.raw(`(SELECT email FROM customers WHERE id = ?)`, [account.customer_id]) as unknown as string);
  const values: ChargeValues = {
    reference_number: referenceNumber(),
    debt_account_id: account.id,
    customer_id: account.customer_id,
    payment_method_id: method?.id ?? null,
    payment_method_type: shown.type,
    card: cardToken(shown),
    bank_account: bankAccount(shown),
    gateway: gateway.name,
    amount: body.amount,
    return_code: null,
    email,
    send_email: body.send_email ?? false,
    metadata: body.metadata ?? {},
    ...keyColumns(idempotency),
    ...origin,
    status: 'processing',
    gateway_reference: null,
    error: null,
    error_code: null,
    settled_at: null,
    settles_at: null,
  };
  return { values, token, head: account.parent_id ?? account.id };
}
