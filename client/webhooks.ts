/**
 * Helpers for receivers of this service's webhooks: the signatures (the spec's
 * X-Service-Signature-256 and the Standard Webhooks headers) and the external-charge.create
 * encryption. The service signs with its own copy (server/webhooks/signing.ts); both are
 * tested against the test vector of the document's Webhooks tag.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { webhooks } from '../generated/schema';

export type WebhookEventName = keyof webhooks;

/** The JSON body delivered for one event, `{ data: ... }`, as the document describes it. */
export type WebhookPayload<E extends WebhookEventName> = NonNullable<
  webhooks[E]['post']['requestBody']
>['content']['application/json'];

type Bytes = string | Uint8Array;

const toBuffer = (value: Bytes): Buffer => (typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value));

/** Lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the webhook's secret. */
export function signWebhookBody(rawBody: Bytes, secret: string): string {
  return createHmac('sha256', secret).update(toBuffer(rawBody)).digest('hex');
}

/**
 * True when `signature` (the X-Service-Signature-256 header) is the signature of `rawBody`.
 * Pass the body exactly as received, before any JSON parsing. The comparison takes the same
 * time wherever the first differing character is.
 */
export function verifyWebhookSignature(rawBody: Bytes, signature: string | undefined | null, secret: string): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(signWebhookBody(rawBody, secret), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/** How far a `webhook-timestamp` may be from the receiver's clock, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

const WHSEC_PREFIX = 'whsec_';

/** The HMAC key of a Standard Webhooks signature: a `whsec_` secret's base64 bytes, any other secret's UTF-8. */
function standardKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** The `v1,<base64>` signature of a delivery with this id and timestamp (one entry of `webhook-signature`). */
export function signStandardWebhook(id: string, timestamp: number | string, rawBody: Bytes, secret: string): string {
  const mac = createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`, 'utf8').update(toBuffer(rawBody));
  return `v1,${mac.digest('base64')}`;
}

/** The request's headers by lowercase name, as node's `req.headers` holds them. */
export interface StandardWebhookHeaders {
  [name: string]: string | string[] | null | undefined;
  'webhook-id'?: string | string[] | null;
  'webhook-timestamp'?: string | string[] | null;
  'webhook-signature'?: string | string[] | null;
}

export interface VerifyOptions {
  /** Seconds either way; 300 by default. */
  toleranceSeconds?: number;
  /** The receiver's clock; the real one by default. */
  now?: () => Date;
}

const single = (value: string | string[] | null | undefined): string | undefined => (Array.isArray(value) ? value[0] : (value ?? undefined));

/**
 * True when the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, as node's lowercase header names) sign `rawBody` with `secret`, and the
 * timestamp is within the tolerance of now, either way: a captured delivery replayed later is
 * refused. Any one of the space-separated `v1,` signatures may match (during a rotation the
 * service signs with the new and the old secret). Constant-time comparison.
 */
export function verifyStandardWebhook(rawBody: Bytes, headers: StandardWebhookHeaders, secret: string, options: VerifyOptions = {}): boolean {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  const now = Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(signStandardWebhook(id, timestamp, rawBody, secret), 'utf8');
  let matched = false;
  for (const candidate of signatures.split(' ')) {
    const given = Buffer.from(candidate, 'utf8');
    // Every candidate is compared, so the time taken does not say which one matched.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}

/**
 * The check a receiver should make: the Standard Webhooks headers verify, with the timestamp
 * within the tolerance (a delivery without them is refused: a body signature alone can be
 * replayed forever). `x-service-signature-256` is not needed for it: it signs the same body
 * with the newest secret only, so during a rotation a receiver still on the old secret relies
 * on `webhook-signature` (verify it alone with `verifyWebhookSignature` where that is wanted).
 * Pass the headers as node gives them (lowercase names) and the body exactly as received.
 */
export function verifyWebhook(rawBody: Bytes, headers: StandardWebhookHeaders, secret: string, options: VerifyOptions = {}): boolean {
  return verifyStandardWebhook(rawBody, headers, secret, options);
}

const IV_LENGTH = 16;

/**
 * AES-128 key of the encrypted event: the first 16 bytes of SHA-256 of the secret (UTF-8).
 * Typed as a Uint8Array (it is a Buffer) so that the package's types need no @types/node.
 */
export function deriveWebhookEncryptionKey(secret: string): Uint8Array {
  return createHash('sha256').update(secret, 'utf8').digest().subarray(0, 16);
}

/**
 * Encrypts an event's data object as external-charge.create carries it: base64 of
 * IV || AES-128-CBC(PKCS#7) ciphertext of the UTF-8 JSON text.
 */
export function encryptWebhookData(data: unknown, secret: string, iv: Uint8Array = randomBytes(IV_LENGTH)): string {
  if (iv.length !== IV_LENGTH) throw new RangeError(`IV must be ${IV_LENGTH} bytes`);
  const cipher = createCipheriv('aes-128-cbc', deriveWebhookEncryptionKey(secret), iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from(iv), ciphertext]).toString('base64');
}

/**
 * Opens the `data` string of an external-charge.create delivery. Throws when the text is not
 * of that layout or was encrypted with another secret.
 */
export function decryptWebhookData(encrypted: string, secret: string): unknown {
  const bytes = Buffer.from(encrypted, 'base64');
  if (bytes.length < IV_LENGTH * 2 || (bytes.length - IV_LENGTH) % IV_LENGTH !== 0) {
    throw new Error('Encrypted webhook data has the wrong length');
  }
  const decipher = createDecipheriv('aes-128-cbc', deriveWebhookEncryptionKey(secret), bytes.subarray(0, IV_LENGTH));
  const plaintext = Buffer.concat([decipher.update(bytes.subarray(IV_LENGTH)), decipher.final()]);
  return JSON.parse(plaintext.toString('utf8'));
}
