/**
 * POST /charges as a story: check the request, tokenize inline details, then in one short
 * transaction lock the account family, check the amount against what can still be charged and
 * reserve it (the charge stored `processing`); commit; ask the gateway holding nothing; record
 * the answer in a second transaction (charge-steps.ts). A declined card is stored as a failed
 * charge, and answered 400 after the commit.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { SecretBox } from '../crypto/secrets';
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
import { reserveInBatch } from './charge-reservations';
import { UUID } from '../db/tenant';
import { moneyWrites } from './write-slots';
import { scheduleCharge } from './scheduled-charges';
import { nowFor } from '../kernel/clock';
import { todayUtc } from '../dates';
import { termsOf, type Channel } from '../payment-terms/payment-terms';
import { amountErrors, intentErrors, laterDayOf, throwIfAny, throwIfDisputed } from '../payment-terms/payment-intent';
import type { IdempotencyScope } from '../idempotency/request-fingerprint';
import { chargeOfRace, earlierCharge, keyColumns } from './charge-idempotency';

type ChargeCreate = components['schemas']['ChargeCreate'];


/** CH- and ten letters and digits without look-alikes: about 50 bits, unique per tenant by index. */
function referenceNumber(): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return `CH-${[...randomBytes(10)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

async function savedMethod(trx: Knex, tenant: Tenant, id: string, customerId: string, now: Date, methods?: Map<string, PaymentMethodRow>): Promise<PaymentMethodRow> {
  // Read before by a batch (`reserveAllOn`: its customers' methods at once), or now.
  const method = methods ? methods.get(id) : await paymentMethodRepo(trx, tenant).find(id);
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

type Origin = Pick<ChargeRow, 'source' | 'payment_plan_id' | 'payment_plan_charge_id'>;

/** A request checked and its inline details tokenized, ready to reserve. */
interface Prepared {
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
  /** The saved methods of the account's customer, read by a batch (`reserveAllOn`). */
  methods?: Map<string, PaymentMethodRow>;
}

const intentOf = (body: ChargeCreate, origin: Origin | undefined, context: ChargeContext) => ({ ...body, instalment: origin?.source === 'payment_plan', guest: context.guest });

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
  const earlier = idempotency && (await earlierCharge(deps.db, tenant, idempotency, deps.config.gatewayAnswerWaitMs));
  if (earlier) return earlier;
  const inline = body.card ? { card: body.card } : body.ach ? { ach: body.ach } : undefined;
  const prepared: Prepared = {
    body,
    intent,
    origin,
    idempotency,
    now,
    later: laterDayOf(body, at.today),
    inlineValues: inline && paymentMethodValues(inline, deps.secrets, now),
    inlineToken: inline && (await tokenize(gateway, inline)),
    reserved: context.reserved,
  };
  // The API's own charge made now (nothing of the caller's to commit with it, no method to
  // save, the account by id) is reserved with those asked together (charge-reservations.ts).
  const together = !context.before && !context.reserved && !context.within && !origin && !prepared.later && !(inline && body.save_payment_method) && UUID.test(body.debt_account_id);
  let reservation: Reservation;
  try {
    reservation = together
      ? await reserveInBatch(deps, { tenant, accountId: body.debt_account_id, gateway, prepared }, reserveOne(deps))
      : await moneyWrites(deps.db, () => deps.db.transaction(async (trx) => {
          await context.before?.(trx);
          const reserved = await reserve(deps, trx, tenant, gateway, prepared);
          if ('scheduled' in reserved) await context.within?.(trx, reserved.scheduled);
          return reserved;
        }));
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

/** Reserves one charge of a batch (charge-reservations.ts), on the family the batch locked for it if any. */
const reserveOne = (deps: PaymentDeps) => async (trx: Knex.Transaction, item: { tenant: Tenant; gateway: PaymentGateway; prepared: Prepared }, family: LockedFamily | undefined) => {
  const reserved = await reserve(deps, trx, item.tenant, item.gateway, { ...item.prepared, family });
  if ('scheduled' in reserved) throw new Error('A charge reserved in a batch is never scheduled for a later day');
  return reserved;
};

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
  const { later, reserved } = prepared;
  const { values, token, head } = await reservationOf(deps, trx, tenant, gateway, prepared);
  if (later) return { scheduled: { charge: await scheduleCharge(deps, trx, tenant, values, later, reserved && ((stored) => reserved(trx, stored))) } };
  const charge = await chargeRepo(trx, tenant).insert(processing(values));
  await reserved?.(trx, charge);
  return { charge, token, head };
}

/** A reserved charge's row: `processing`, nothing answered yet. */
const processing = (values: Omit<ChargeValues, keyof AnsweredValues>): ChargeValues => ({ ...values, status: 'processing', gateway_reference: null, error: null, error_code: null, settled_at: null, settles_at: null });

/** What `reserve` checks under the family's lock and the charge's row it would store (the customer's method saved, if asked). */
async function reservationOf(
  deps: PaymentDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  gateway: PaymentGateway,
  prepared: Prepared,
): Promise<{ values: Omit<ChargeValues, keyof AnsweredValues>; token: string; head: string }> {
  const { body, intent, origin, idempotency, now, inlineValues, inlineToken } = prepared;
  // Saving a method locks the customer (as saving one directly does); taking it before the
  // accounts keeps one lock order, customer then accounts, for every charge.
  if (inlineValues && body.save_payment_method) {
    const peek = await debtAccountRepo(trx, tenant).find(body.debt_account_id);
    if (peek) await customerRepo(trx, tenant).find(peek.customer_id, { forUpdate: true });
  }
  const family = prepared.family?.account.id === body.debt_account_id ? prepared.family : await lockAccount(trx, tenant, body.debt_account_id);
  if (!family) throw ApiError.field('debt_account_id', 'does not exist');
  const { account } = family;
  const terms = termsOf(account);
  throwIfDisputed(terms, body.amount);
  throwIfAny(amountErrors(terms, intent));

  let method = body.payment_method_id ? await savedMethod(trx, tenant, body.payment_method_id, account.customer_id, now, prepared.methods) : undefined;
  if (inlineValues && body.save_payment_method) {
    const methods = paymentMethodRepo(trx, tenant);
    const first = !(await methods.hasAny(account.customer_id));
    method = await methods.insert(account.customer_id, { ...inlineValues, gateway_token: inlineToken!, is_primary: first });
    await paymentMethodSaved(deps.events, trx, tenant, account.customer_id);
  }
  const shown = method ?? ({ ...inlineValues, created_at: new Date(), updated_at: new Date() } as PaymentMethodRow);
  const token = method?.gateway_token ?? inlineToken!;

  // The customer's e-mail by default, read by the insert itself (no round trip of its own under the lock).
  const email = body.email ?? (trx.raw(`(SELECT email FROM customers WHERE id = ?)`, [account.customer_id]) as unknown as string);
  const values: Omit<ChargeValues, keyof AnsweredValues> = {
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
  };
  return { values, token, head: account.parent_id ?? account.id };
}

/** One instalment's charge to reserve in a batch (`reserveAllOn`): what `reserveOn` takes, and its tenant's time. */
export interface ToReserveOn {
  tenant: Tenant;
  gateway: PaymentGateway;
  body: ChargeCreate;
  origin: Origin;
  family?: LockedFamily;
  /** The tenant's time (the sandbox clock in a sandbox). */
  now: Date;
}

/**
 * Step 1 of many instalments' charges at once, on the plan runner's transaction (which holds
 * their families' locks): each checked as `reserveOn` checks it, their customers' saved methods
 * read in one statement per tenant, and the charges stored in one per tenant. Answers each
 * one's reservation, or the ApiError of the rule that refused it, in order.
 */
export async function reserveAllOn(deps: PaymentDeps, trx: Knex.Transaction, requests: ToReserveOn[]): Promise<({ charge: ChargeRow; token: string; head: string } | ApiError)[]> {
  const tenants = new Map<string, { tenant: Tenant; customers: Set<string>; methods: Map<string, PaymentMethodRow> }>();
  for (const { tenant, family } of requests) {
    const key = `${tenant.organizationId}:${tenant.environment}`;
    const entry = tenants.get(key) ?? tenants.set(key, { tenant, customers: new Set(), methods: new Map() }).get(key)!;
    if (family) entry.customers.add(family.account.customer_id);
  }
  for (const { tenant, customers, methods } of tenants.values()) {
    for (const method of await paymentMethodRepo(trx, tenant).forCustomers([...customers])) methods.set(method.id, method);
  }
  const results: ({ charge: ChargeRow; token: string; head: string } | ApiError | undefined)[] = [];
  const toStore: { index: number; tenant: Tenant; values: ChargeValues; token: string; head: string }[] = [];
  for (const { tenant, gateway, body, origin, family, now } of requests) {
    const intent = intentOf(body, origin, {});
    // Only the family's own customer's methods were read: any other request reads its own.
    const methods = family?.account.id === body.debt_account_id ? tenants.get(`${tenant.organizationId}:${tenant.environment}`)!.methods : undefined;
    try {
      throwIfAny(intentErrors(intent, { channel: 'api', today: todayUtc(now) }));
      const prepared: Prepared = { body, intent, origin, idempotency: undefined, now, later: undefined, inlineValues: undefined, inlineToken: undefined, family, methods };
      const { values, token, head } = await reservationOf(deps, trx, tenant, gateway, prepared);
      toStore.push({ index: results.length, tenant, values: processing(values), token, head });
      results.push(undefined);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push(error);
    }
  }
  for (const { tenant } of tenants.values()) {
    const mine = toStore.filter((each) => each.tenant.organizationId === tenant.organizationId && each.tenant.environment === tenant.environment);
    const stored = await chargeRepo(trx, tenant).insertMany(mine.map((each) => each.values));
    mine.forEach((each, at) => (results[each.index] = { charge: stored[at]!, token: each.token, head: each.head }));
  }
  return results as ({ charge: ChargeRow; token: string; head: string } | ApiError)[];
}
