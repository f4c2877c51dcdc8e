/**
 * One charge checked before it is stored, whoever asks (a single `POST /charges`, a batch of the
 * API's, a plan's instalment, a batch of due work): its account family locked (or the one the
 * caller locked), the payment terms checked against what can still be charged, its saved or
 * inline method, and the row to store `processing`. The one path of those checks.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { bankAccount, cardToken } from '../kernel/masking';
import { paymentMethodRepo, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import type { paymentMethodValues } from '../payment-methods/payment-method-service';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { lockAccount, type LockedFamily } from './balances';
import type { ChargeRow, ChargeValues } from '../charge-store/charge-repo';
import type { PaymentGateway } from '../gateway/gateway';
import type { PaymentDeps } from './payment-deps';
import { paymentMethodSaved } from './payment-events';
import { termsOf } from '../payment-terms/payment-terms';
import { amountErrors, throwIfAny, throwIfDisputed } from '../payment-terms/payment-intent';
import type { IdempotencyScope } from '../idempotency/request-fingerprint';
import { keyColumns } from './charge-idempotency';

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
  reserved?: (trx: Knex.Transaction, charge: ChargeRow) => Promise<void>;
  /** In a batch: the saved methods the batch read for its charges, by id. */
  methods?: Map<string, PaymentMethodRow>;
  /**
   * In a batch whose charges are stored together at its end: the cents that its earlier charges
   * reserved on the family of `head` (its head's id), not stored yet. They count as the family's
   * reservations, as they will once stored.
   */
  pending?: (head: string) => number;
}

export const intentOf = (body: ChargeCreate, origin: Origin | undefined, context: { guest?: boolean }) => ({ ...body, instalment: origin?.source === 'payment_plan', guest: context.guest });

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
