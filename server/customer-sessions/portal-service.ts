/**
 * The person's side of a session: opening its Portal entry or its short link. Either finds
 * the session by what the link carries, refuses an expired one (to expiration_return_url, or
 * 410), and records the use, which slides a session without valid_until. The Portal's pages
 * record a use on every page the browser session opens (`useSession`).
 */
import { hashToken } from '../crypto/secrets';
import { ApiError } from '../http/errors';
import { expiryAfterUse, isExpired } from './session-lifetime';
import { pagePath } from './session-links';
import { portalUrlOf } from './session-mapper';
import { sessionLinkRepo, tenantOfSession, type SessionRow } from './session-repo';
import type { SessionDeps } from './session-service';
import { nowFor, withClock } from '../sandbox/sandbox-clock';

/** Where the person goes next: a redirect, or (Portal entry only) the valid session. */
export type Opened = { redirect: string } | { session: SessionRow };

const linkNotFound = () => new ApiError('not_found', 'This link does not exist.');

export function expired(row: SessionRow): { redirect: string } {
  if (row.expiration_return_url) return { redirect: row.expiration_return_url };
  throw new ApiError('gone', 'This link has expired.');
}

/** The session after a use now, or undefined when it has expired (before or during the use). */
export async function useSession(deps: SessionDeps, row: SessionRow): Promise<SessionRow | undefined> {
  // The session's own sandbox clock: a link expires in sandbox time.
  const now = nowFor(deps.clock, await withClock(deps.db, tenantOfSession(row)));
  if (isExpired(row.expires_at, now)) return undefined;
  return sessionLinkRepo(deps.db).recordUse(row.id, now, expiryAfterUse(row, now));
}

/** `page` is the request's path after `/s/<token>`; it must be the session's own page. */
async function openPortalEntry(deps: SessionDeps, token: string, page: string): Promise<Opened> {
  const found = await sessionLinkRepo(deps.db).findByTokenHash(hashToken(token));
  if (!found || pagePath(found) !== page) throw linkNotFound();
  const row = await useSession(deps, found);
  if (!row) return expired(found);
  return { session: row };
}

async function followShortLink(deps: SessionDeps, code: string): Promise<{ redirect: string }> {
  const found = await sessionLinkRepo(deps.db).findByShortCode(code);
  if (!found) throw linkNotFound();
  const row = await useSession(deps, found);
  if (!row) return expired(found);
  return { redirect: portalUrlOf(row, deps.secrets.decrypt(row.token_sealed), deps.config) };
}

export function portalService(deps: SessionDeps) {
  return {
    openEntry: (token: string, page: string) => openPortalEntry(deps, token, page),
    followShortLink: (code: string) => followShortLink(deps, code),
  };
}
