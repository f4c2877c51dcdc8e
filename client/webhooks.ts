/**
 * Helpers for receivers of this service's webhooks, and for the service that sends them:
 * one implementation of the signature and of the external-charge.create encryption, so the
 * two sides cannot drift apart.
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
