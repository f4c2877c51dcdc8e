/**
 * The idempotency key of a Portal payment (the Portal API's `Idempotency-Key`, or the key of
 * the checkout form shown), scoped as the API's keys are: to its caller, here the customer and
 * the browser session, and to the operation's path. Another customer's key, even the key of
 * one of their API charges, is never answered with their charge.
 */
import type { components } from '../../generated/schema';
import type { SecretBox } from '../crypto/secrets';
import { portalCaller, requestFingerprint, type IdempotencyScope } from '../idempotency/request-fingerprint';
import type { Visit } from './browser-sessions';

/** A key and the Portal path (below the Portal's mount) of the payment it was sent to. */
export interface PaymentKey {
  key: string;
  path: string;
}

/** The scope of a payment's key; the fingerprint is of the charge the payment asks for. */
export function paymentScope(secrets: SecretBox, visit: Visit, paymentKey: PaymentKey, charge: components['schemas']['ChargeCreate']): IdempotencyScope {
  return {
    caller: portalCaller(visit.browser.customer_id!, visit.browser.id),
    method: 'POST',
    path: paymentKey.path,
    key: paymentKey.key,
    fingerprint: requestFingerprint(secrets, 'POST', paymentKey.path, charge),
  };
}

export const paymentKeyOf = (key: string | undefined, path: string): PaymentKey | undefined => (key === undefined ? undefined : { key, path });
