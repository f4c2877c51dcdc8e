/**
 * Stripe's webhook events as ProcessorNotices: the `Stripe-Signature` checked by the SDK
 * (`webhooks.constructEvent`, HMAC-SHA256 over the timestamp and the raw body, with Stripe's
 * documented tolerance of 300 seconds), then the few events that move our money translated.
 */
import Stripe from 'stripe';
import { NoticeSignatureInvalid, type ProcessorNotice } from '../processor-notices';
import { achReturnOf, declineOf } from './stripe-declines';

/** Only the SDK's webhook helpers are used: no request is made with this key. */
const verifier = new Stripe('sk_test_webhooks_only', { telemetry: false });

const idOf = (value: string | { id: string } | null | undefined) => (typeof value === 'string' ? value : value?.id);

function paymentIntentNotice(event: Stripe.Event, intent: Stripe.PaymentIntent): ProcessorNotice {
  const base = { noticeId: event.id, reference: intent.id, chargeId: intent.metadata?.charge_id || undefined };
  if (event.type === 'payment_intent.succeeded') return { ...base, kind: 'payment.succeeded' };
  const error = intent.last_payment_error;
  // A bank debit fails after it was counted: the bank returned it.
  if (intent.payment_method_types.includes('us_bank_account')) return { ...base, kind: 'ach.returned', ...achReturnOf(error?.code, error?.message) };
  return { ...base, kind: 'payment.failed', ...declineOf(error?.decline_code ?? error?.code) };
}

function disputeNotice(event: Stripe.Event, dispute: Stripe.Dispute): ProcessorNotice {
  const base = { noticeId: event.id, reference: idOf(dispute.payment_intent) ?? idOf(dispute.charge) ?? '', disputeId: dispute.id, amount: dispute.amount };
  if (event.type === 'charge.dispute.created') return { ...base, kind: 'chargeback.opened', reason: dispute.reason };
  if (dispute.status === 'won') return { ...base, kind: 'chargeback.won' };
  if (dispute.status === 'lost') return { ...base, kind: 'chargeback.lost' };
  return { noticeId: event.id, reference: base.reference, kind: 'ignored', type: `${event.type}:${dispute.status}` };
}

/** The notice of one Stripe webhook delivery; throws NoticeSignatureInvalid when its signature does not hold. */
export function parseStripeNotice(rawBody: Buffer, headers: Record<string, string | string[] | undefined>, webhookSecret: string): ProcessorNotice {
  const signature = headers['stripe-signature'];
  if (typeof signature !== 'string' || signature === '') throw new NoticeSignatureInvalid('The Stripe-Signature header is missing.');
  let event: Stripe.Event;
  try {
    event = verifier.webhooks.constructEvent(rawBody, signature, webhookSecret);
  } catch (error) {
    throw new NoticeSignatureInvalid(`The Stripe-Signature header does not match the body: ${(error as Error).message}`);
  }
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
      return paymentIntentNotice(event, event.data.object);
    case 'charge.dispute.created':
    case 'charge.dispute.closed':
      return disputeNotice(event, event.data.object);
    default:
      return { noticeId: event.id, reference: '', kind: 'ignored', type: event.type };
  }
}
