/**
 * What a retry is compared with: a request's fingerprint and the scope its key belongs to.
 *
 * The fingerprint is an HMAC-SHA-256 under a key derived from the server's secret key (as the
 * sealed data's keys are), of the method, the path and the body in one canonical order, taken
 * AFTER the card and bank numbers were replaced by their keyed fingerprints and the security
 * code was removed, and with a multipart request's file as its part name, declared type and
 * the SHA-256 of its bytes (another file under the same key is another request; its name is
 * not compared, nothing is stored or served by it). An unkeyed digest of a body that holds a card number lets anyone with the
 * database test every guess of the number (a BIN leaves about 10^6) and then of its security
 * code; this one cannot be tested without the key, and even with the key the numbers are only
 * their keyed fingerprints. A security code alone never makes two requests differ: a retry
 * with another code is the same payment (PCI DSS 3.3.1.2 keeps no form of it).
 */
import { createHash } from 'node:crypto';
import type { SecretBox } from '../crypto/secrets';

/** Replaced by their keyed fingerprint, wherever they are in a body. */
const NUMBERS = new Set(['card_number', 'routing_number', 'account_number']);
/** Removed, wherever they are in a body. */
const DROPPED = new Set(['card_security_code']);

/** Who a key belongs to, and to which operation: another caller's key, or another path's, is another key. */
export interface IdempotencyScope {
  /** `token:<api token id>` for the API; `portal:<customer id>:<browser session id>` for the Portal. */
  caller: string;
  method: string;
  path: string;
  key: string;
  /** The keyed fingerprint of the request (requestFingerprint). */
  fingerprint: string;
}

/** The body with its card and bank numbers as keyed fingerprints and no security code. */
export function withoutCardData(value: unknown, secrets: SecretBox): unknown {
  if (Array.isArray(value)) return value.map((item) => withoutCardData(item, secrets));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
    if (DROPPED.has(name)) continue;
    out[name] = NUMBERS.has(name) && typeof item === 'string' ? `fp:${secrets.fingerprint(item)}` : withoutCardData(item, secrets);
  }
  return out;
}

/** A file of a multipart request, as the multipart reader keeps it (multer's shape). */
export interface RequestFile {
  fieldname: string;
  mimetype: string;
  buffer: Buffer;
}

/**
 * Same method, path and body, whatever the order of the body's keys; keyed, after the card data
 * is gone. A multipart request's files are part of its body: each by its part, declared type
 * and the SHA-256 of its bytes.
 */
export function requestFingerprint(secrets: SecretBox, method: string, path: string, body: unknown, files: readonly RequestFile[] = []): string {
  const parts = files
    .map((file) => ({ part: file.fieldname, type: file.mimetype, sha256: createHash('sha256').update(file.buffer).digest('hex') }))
    .sort((a, b) => (a.part < b.part ? -1 : a.part > b.part ? 1 : 0));
  const text = `${method} ${path}\n${canonical(withoutCardData(body, secrets))}`;
  return secrets.requestDigest(parts.length === 0 ? text : `${text}\nfiles:${canonical(parts)}`);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The caller, method and path of a scope as one text: the charges' `idempotency_scope`. */
export const scopeText = (scope: Pick<IdempotencyScope, 'caller' | 'method' | 'path'>): string => `${scope.caller} ${scope.method} ${scope.path}`;

export const apiCaller = (tokenId: string): string => `token:${tokenId}`;
export const portalCaller = (customerId: string, browserSessionId: string): string => `portal:${customerId}:${browserSessionId}`;
