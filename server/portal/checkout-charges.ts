/**
 * A Portal checkout's charge made now, followed to its answer. The checkout keeps who paid and
 * as what (`portal_checkout_charges`) in the transaction that reserves the charge; when the
 * answer is recorded (`charge.finished`: by the request itself, by its late answer, or by
 * charge-recovery after a crash or a lost answer), the checkout's activity events — the policy
 * accepted, the payment's success or failure, the documents signed — are recorded in that same
 * transaction, once (`tracked_at`). So a checkout answered 202 (processing) tells the same as
 * one answered at once.
 */
import type { Knex } from 'knex';
import type { ChargeRow } from '../charge-store/charge-repo';
import type { EventRecorder } from '../events/events';
import { listen, type Happenings, type Listener } from '../events/listeners';
import type { Tenant } from '../kernel/tenant';
import { tellSignaturesOf } from './checkout-documents';
import { track } from './tracking';
import type { EventName } from '../events/events';
import { apiCaller } from '../idempotency/request-fingerprint';

/** How the scope of an API caller's key begins (request-fingerprint.ts). */
const API_SCOPE = apiCaller('');

const CHECKOUT_CHARGES = 'portal_checkout_charges';

export interface CheckoutOf {
  deviceId: string;
  customerId: string | null;
  debtAccountId: string;
  guest: boolean;
  full: boolean;
  occurredAt: Date;
}

interface CheckoutRow {
  device_id: string;
  customer_id: string | null;
  debt_account_id: string;
  guest: boolean;
  full_amount: boolean;
  occurred_at: Date;
}

/** In the reservation's transaction: the checkout behind `charge`. */
export async function rememberCheckout(trx: Knex.Transaction, tenant: Tenant, charge: ChargeRow, checkout: CheckoutOf): Promise<void> {
  await trx(CHECKOUT_CHARGES).insert({
    charge_id: charge.id,
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    device_id: checkout.deviceId,
    customer_id: checkout.customerId,
    debt_account_id: checkout.debtAccountId,
    guest: checkout.guest,
    full_amount: checkout.full,
    occurred_at: checkout.occurredAt,
  });
}

/** The tracking event of a one-time payment: by who paid, how much of the balance, and whether it went through. */
export function paymentEvent(guest: boolean, full: boolean, ok: boolean, scheduled = false): EventName {
  if (scheduled && ok && !guest) return full ? 'customer.checkout.one-time-payment.full-amount.scheduled.success' : 'customer.checkout.one-time-payment.amount.scheduled.success';
  const outcome = ok ? 'success' : 'failed';
  if (guest) return full ? `guest.customer.one-time-payment.full-amount.${outcome}` : `guest.customer.one-time-payment.${outcome}`;
  return full ? `customer.checkout.one-time-payment.full-amount.${outcome}` : `customer.checkout.one-time-payment.amount.${outcome}`;
}

/** The answer of a checkout's charge was recorded: its activity events, in that transaction, once. */
async function checkoutFinished(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, { charge }: Happenings['charge.finished']): Promise<void> {
  // A checkout's charge is the Portal's one-time payment, made as the API's (source `api`): nothing to look up for any other.
  if (charge.source !== 'api') return;
  // Nor for one an API caller made under its Idempotency-Key (scope `token:…`): a checkout's key
  // is scoped to the Portal's customer and browser session (`portal:…`, payment-key.ts).
  if (charge.idempotency_scope?.startsWith(API_SCOPE)) return;
  const [row] = (await trx(CHECKOUT_CHARGES)
    .where({ charge_id: charge.id, organization_id: tenant.organizationId, environment: tenant.environment })
    .whereNull('tracked_at')
    .update({ tracked_at: trx.fn.now() })
    .returning(['device_id', 'customer_id', 'debt_account_id', 'guest', 'full_amount', 'occurred_at'])) as CheckoutRow[];
  if (!row) return;
  const ok = charge.status !== 'failed';
  const activity = (event: EventName) => ({ event, deviceId: row.device_id, occurredAt: row.occurred_at, customerId: row.customer_id, debtAccountId: row.debt_account_id });
  await track(trx, events, tenant, [activity('customer.checkout.policy.accepted'), activity(paymentEvent(row.guest, row.full_amount, ok))]);
  if (ok) await tellSignaturesOf(trx, events, tenant, { deviceId: row.device_id, customerId: row.customer_id, accountId: row.debt_account_id, now: row.occurred_at });
}

const finished: Listener<'charge.finished'> = checkoutFinished;

/** Registers the Portal's listener (once, however often it is called). */
export function listenToCheckouts(): void {
  listen('charge.finished', finished);
}
