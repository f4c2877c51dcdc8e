/**
 * Authorize.net's webhooks, checked and translated into our `ProcessorNotice`. Each is signed:
 * `X-ANET-Signature: sha512=<HMAC-SHA512 of the raw body with the Signature Key, in hex>`.
 *
 * What it sends about payments: `net.authorize.payment.*` (authorization, authcapture, capture,
 * priorAuthCapture, refund and void `.created`, and `fraud.held`, `fraud.approved`,
 * `fraud.declined`). It documents no webhook for an eCheck return or a chargeback: those are
 * statuses in its transaction reports (`returnedItem`, `chargeback`, `chargebackReversal`),
 * read by the adapter's `laterNotices()` into this same shape. So here:
 * - authcapture.created approved: `payment.succeeded` (finishes a charge whose answer we lost);
 *   declined or in error: `payment.failed`; held (response 4): ignored, its fraud.* follows;
 * - fraud.approved: `payment.succeeded`; fraud.declined: `payment.failed` (card_declined);
 *   fraud.held: ignored (the charge stays as it is until the review ends);
 * - void.created and refund.created: ignored. We void and refund through the API and record it
 *   then; one made in the Merchant Interface by hand is the agency's to record (there is no
 *   notice kind for it, and guessing its effect on a balance is worse than leaving it).
 * - anything else (customer profiles, subscriptions, authorization-only): ignored.
 * The notice's `noticeId` is Authorize.net's `notificationId`; a retried delivery carries the
 * same one, so it is parsed the same and applied once.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { NoticeSignatureInvalid, type ProcessorNotice } from '../processor-notices';
import { RESPONSE } from './authorize-net-codes';
import { DECLINE_MESSAGES } from '../gateway';

interface Webhook {
  notificationId: string;
  eventType: string;
  eventDate?: string;
  webhookId?: string;
  payload?: { responseCode?: number | string; authAmount?: number; invoiceNumber?: string; entityName?: string; id?: string | number };
}

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  const found = Object.keys(headers).find((key) => key.toLowerCase() === name);
  return found === undefined ? undefined : headers[found];
}

/** Throws NoticeSignatureInvalid unless `rawBody` carries the signature key's HMAC-SHA512. */
export function checkAuthorizeNetSignature(rawBody: Buffer, headers: Record<string, string | undefined>, signatureKey: string): void {
  const given = /^sha512=([0-9a-f]{128})$/i.exec(header(headers, 'x-anet-signature')?.trim() ?? '');
  if (!given) throw new NoticeSignatureInvalid('The X-ANET-Signature header is missing or malformed.');
  // The Signature Key is given in hex; the HMAC is keyed with the text as Authorize.net shows it.
  const expected = createHmac('sha512', signatureKey).update(rawBody).digest();
  if (!timingSafeEqual(Buffer.from(given[1]!, 'hex'), expected)) throw new NoticeSignatureInvalid('The X-ANET-Signature does not match the body.');
}

export function parseAuthorizeNetNotice(rawBody: Buffer, headers: Record<string, string | undefined>, signatureKey: string): ProcessorNotice {
  checkAuthorizeNetSignature(rawBody, headers, signatureKey);
  let webhook: Webhook;
  try {
    webhook = JSON.parse(rawBody.toString('utf8')) as Webhook;
  } catch {
    // Signed by the processor yet unreadable: nothing to apply.
    throw new NoticeSignatureInvalid('The notice is not JSON.');
  }
  if (typeof webhook?.notificationId !== 'string' || typeof webhook.eventType !== 'string') throw new NoticeSignatureInvalid('The notice has no notificationId or eventType.');
  const payload = webhook.payload ?? {};
  const base = { noticeId: webhook.notificationId, reference: payload.id === undefined ? '' : String(payload.id) };
  const ignored = (): ProcessorNotice => ({ ...base, kind: 'ignored', type: webhook.eventType });
  if (payload.entityName !== 'transaction' || !base.reference) return ignored();

  switch (webhook.eventType) {
    case 'net.authorize.payment.authcapture.created': {
      const response = String(payload.responseCode ?? '');
      if (response === RESPONSE.approved) return { ...base, kind: 'payment.succeeded' };
      if (response === RESPONSE.declined) return { ...base, kind: 'payment.failed', code: 'card_declined', message: DECLINE_MESSAGES.card_declined };
      if (response === RESPONSE.error) return { ...base, kind: 'payment.failed', code: 'processing_error', message: DECLINE_MESSAGES.processing_error };
      return ignored();
    }
    case 'net.authorize.payment.fraud.approved':
      return { ...base, kind: 'payment.succeeded' };
    case 'net.authorize.payment.fraud.declined':
      return { ...base, kind: 'payment.failed', code: 'card_declined', message: 'The card was declined after the processor’s fraud review.' };
    default:
      return ignored();
  }
}
