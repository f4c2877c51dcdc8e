/**
 * How a delivery is signed (and external-charge.create encrypted), on the sending side. The
 * client package keeps its own copy for receivers (client/webhooks.ts); both are checked
 * against the test vector of the document's Webhooks tag, so they cannot drift apart.
 *
 * - `X-Service-Signature-256` (spec 6.2): lowercase hex HMAC-SHA256 of the body, keyed with the
 *   secret's UTF-8 bytes.
 * - Standard Webhooks: `webhook-signature` is `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
 *   one per secret, space-separated. A `whsec_` secret is keyed with the bytes its base64 names;
 *   any other secret with its UTF-8 bytes (the library's "raw" format).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

export const WHSEC_PREFIX = 'whsec_';
/** Bytes of a generated secret; the Standard Webhooks spec asks for 24 to 64. */
const GENERATED_BYTES = 32;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateSecret(): string {
  return WHSEC_PREFIX + randomBytes(GENERATED_BYTES).toString('base64');
}

/** Why a secret given on write cannot key a signature; undefined when it can. */
export function secretProblem(secret: string): string | undefined {
  if (!secret.startsWith(WHSEC_PREFIX)) return undefined;
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (!BASE64.test(encoded)) return `a secret starting with ${WHSEC_PREFIX} must be base64 after it`;
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) return `a secret starting with ${WHSEC_PREFIX} must hold ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes of base64`;
  return undefined;
}

/** The HMAC key of the Standard Webhooks signature. */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(WHSEC_PREFIX) ? Buffer.from(secret.slice(WHSEC_PREFIX.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** X-Service-Signature-256. */
export function legacySignature(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** webhook-signature: one `v1,` signature per secret (the new one first during a rotation). */
export function standardSignature(id: string, timestamp: number, body: Buffer, secrets: string[]): string {
  const prefix = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  return secrets.map((secret) => `v1,${createHmac('sha256', signingKey(secret)).update(prefix).update(body).digest('base64')}`).join(' ');
}

const encryptionKey = (secret: string) => createHash('sha256').update(secret, 'utf8').digest().subarray(0, 16);

/** external-charge.create's data: base64 of IV || AES-128-CBC of the JSON, keyed with SHA-256(secret)[0..16]. */
export function encryptEventData(data: unknown, secret: string, iv: Uint8Array = randomBytes(16)): string {
  const cipher = createCipheriv('aes-128-cbc', encryptionKey(secret), iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from(iv), ciphertext]).toString('base64');
}

/** The inverse, for the document's encrypted example (test deliveries send what it decrypts to). */
export function decryptEventData(encrypted: string, secret: string): unknown {
  const bytes = Buffer.from(encrypted, 'base64');
  const decipher = createDecipheriv('aes-128-cbc', encryptionKey(secret), bytes.subarray(0, 16));
  return JSON.parse(Buffer.concat([decipher.update(bytes.subarray(16)), decipher.final()]).toString('utf8'));
}

export interface SignedContent {
  deliveryId: string;
  webhookId: string;
  event: string;
  /** The payload, or `dataJson`: its JSON text as the event log stores it (sent as it is). */
  data?: unknown;
  dataJson?: string;
}

/**
 * The headers and body of one attempt, signed with `secrets` (the current one first). Built
 * once: the signatures cover exactly these bytes, and exactly these are sent.
 */
export function signedRequest(content: SignedContent, secrets: string[], now = Date.now()): { headers: Record<string, string>; body: Buffer } {
  const [secret] = secrets as [string];
  const plain = () => (content.dataJson !== undefined ? JSON.parse(content.dataJson) : content.data);
  const json = content.event === 'external-charge.create' ? JSON.stringify(encryptEventData(plain(), secret)) : (content.dataJson ?? JSON.stringify(content.data ?? null));
  // The same bytes as JSON.stringify({ data }), without parsing the stored text again.
  const body = Buffer.from(`{"data":${json}}`, 'utf8');
  const timestamp = Math.floor(now / 1000);
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'debt-collection-service-webhooks/1',
    'X-Service-Event-Name': content.event,
    'X-Service-Webhook-ID': content.webhookId,
    'X-Service-Delivery-ID': content.deliveryId,
    'X-Service-Signature-256': legacySignature(body, secret),
    'webhook-id': content.deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignature(content.deliveryId, timestamp, body, secrets),
  };
  return { headers, body };
}
