/**
 * CSRF protection by a synchronizer token: each browser session holds one random token (in
 * its database row); every form carries it in `_csrf`, and the Portal API's callers send it
 * in `X-CSRF-Token`. A small check of our own rather than a library: the token lives where
 * the session already lives, so there is no second cookie to sign (as double-submit
 * libraries need) and nothing to configure; SameSite=Lax on the session cookie is a second
 * line of defence.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { ApiError } from '../kernel/errors';

export function csrfTokenOf(req: Request): string | undefined {
  const header = req.get('x-csrf-token');
  if (header) return header;
  const body = req.body as Record<string, unknown> | undefined;
  return typeof body?._csrf === 'string' ? body._csrf : undefined;
}

export function csrfMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * What a POST without the session's token is told, by the service and by the mock alike: its
 * own errorCode, so a client can tell it from `forbidden` ("verify first") and fetch the token again.
 */
export function csrfRefusal(): ApiError {
  return new ApiError('csrf_token_invalid', 'X-CSRF-Token is missing or is not this browser session\'s; read it again from GET /api/session.');
}
