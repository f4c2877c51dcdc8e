/**
 * The person's side of a session: opening its Portal entry or its short link. Either finds
 * the session by what the link carries, refuses an expired one (to expiration_return_url, or
 * 410), and records the use, which slides a session without valid_until. The Portal's pages
 * record a use on every page the browser session opens (`useCustomerSession`).
 */
import { hashToken } from '../crypto/secrets';
import { ApiError } from '../kernel/errors';
import { expiryAfterUse, isExpired } from '../customer-sessions/customer-session-lifetime';
import { pagePath } from '../customer-sessions/customer-session-links';
import { portalUrlOf } from '../customer-sessions/customer-session-mapper';
import { customerSessionLinkRepo, tenantOfCustomerSession, type CustomerSessionRow } from '../customer-sessions/customer-session-repo';
import type { CustomerSessionDeps } from '../customer-sessions/customer-session-service';
import { nowFor, withClock } from '../kernel/clock';

/** Where the person goes next: a redirect, or (Portal entry only) the valid session. */
export type Opened = { redirect: string } | { session: CustomerSessionRow };

const linkNotFound = () => new ApiError('not_found', 'This link does not exist.');

export function expired(row: CustomerSessionRow): { redirect: string } {
  if (row.expiration_return_url) return { redirect: row.expiration_return_url };
  throw new ApiError('gone', 'This link has expired.');
}

/** The session after a use now, or undefined when it has expired (before or during the use). */
export async function useCustomerSession(deps: CustomerSessionDeps, row: CustomerSessionRow): Promise<CustomerSessionRow | undefined> {
  // The session's own sandbox clock: a link expires in sandbox time.
  const now = nowFor(deps.clock, await withClock(deps.db, tenantOfCustomerSession(row)));
  if (isExpired(row.expires_at, now)) return undefined;
  return customerSessionLinkRepo(deps.db).recordUse(row.id, now, expiryAfterUse(row, now));
}

/** `page` is the request's path after `/s/<token>`; it must be the session's own page. */
async function openPortalEntry(deps: CustomerSessionDeps, token: string, page: string): Promise<Opened> {
  const found = await customerSessionLinkRepo(deps.db).findByTokenHash(hashToken(token));
  if (!found || pagePath(found) !== page) throw linkNotFound();
  const row = await useCustomerSession(deps, found);
  if (!row) return expired(found);
  return { session: row };
}

async function followShortLink(deps: CustomerSessionDeps, code: string): Promise<{ redirect: string }> {
  const found = await customerSessionLinkRepo(deps.db).findByShortCode(code);
  if (!found) throw linkNotFound();
  const row = await useCustomerSession(deps, found);
  if (!row) return expired(found);
  return { redirect: portalUrlOf(row, deps.secrets.decrypt(row.token_sealed), deps.config) };
}

export function linkEntry(deps: CustomerSessionDeps) {
  return {
    openEntry: (token: string, page: string) => openPortalEntry(deps, token, page),
    followShortLink: (code: string) => followShortLink(deps, code),
  };
}
