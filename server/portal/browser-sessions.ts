/**
 * Browser sessions. Opening a link's `portal_url` exchanges the link's token for a session
 * cookie, then every page finds its visit by that cookie: the customer session still valid (a
 * use slides it, as opening the link does), or a guest's quiet while not over.
 */
import type { Request, Response } from 'express';
import type { Knex } from 'knex';
import { hashToken } from '../crypto/secrets';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { expired, linkEntry, useCustomerSession } from './link-entry';
import { customerSessionLinkRepo, tenantOfCustomerSession, type CustomerSessionRow } from '../customer-sessions/customer-session-repo';
import { nowFor, withClock } from '../kernel/clock';
import { browserSessionRepo, tenantOfBrowser, type BrowserSessionRow } from './browser-session-repo';
import { clearBrowserSessionCookie, deviceId, newSecret, readCookie, rememberedOrganization, rememberOrganization, BROWSER_SESSION_COOKIE, setBrowserSessionCookie, type CookieScope } from './cookies';
import { PortalStop, type PageLink } from './page-error';
import { isGuest, needsVerification } from './access';
import { debtorZone } from './debtor-zone';
import { ORGANIZATION_LOCAL, ZONE_LOCAL } from './render';

export { isGuest, needsVerification };

/** A guest's browser session ends after this long without a request. */
export const GUEST_IDLE_MINUTES = 30;

export interface Visit {
  browser: BrowserSessionRow;
  /** The customer session of a link; undefined for a guest. */
  customerSession: CustomerSessionRow | undefined;
  tenant: Tenant;
  now: Date;
  deviceId: string;
}

export interface PortalScope extends CookieScope {
  /** The path the Portal is mounted at ('' for the root). */
  base: string;
}

/** The ways back in of a browser that remembers its organization: "Sign in" beside "Find my account". */
export function waysBackIn(base: string, req: Request): PageLink[] {
  const query = rememberedOrganization(req);
  return query ? [{ href: `${base}/sign-in?${query}`, text: 'Sign in' }, { href: `${base}/?${query}`, text: 'Find my account' }] : [];
}

/** A page of a customer without a browser session: signed out, or never signed in here. */
export const signedOut = (base: string, req: Request) => {
  const links = waysBackIn(base, req);
  return new PortalStop(
    401,
    'unauthenticated',
    'Please sign in again',
    links.length > 0
      ? 'For your security this page needs you to be signed in. Sign in with your Portal account, find your account with your details, or open the link from your message or e-mail again.'
      : 'For your security this page needs you to be signed in. Please open your link again (from your message or e-mail), or the Portal address on your creditor\'s letters.',
    undefined,
    links,
  );
};

function expiredStop(session: CustomerSessionRow, base: string): PortalStop {
  try {
    return new PortalStop(303, 'gone', 'This link has expired', 'This link has expired.', expired(session).redirect);
  } catch {
    const query = `organization=${session.organization_id}${session.environment === 'sandbox' ? '&environment=sandbox' : ''}`;
    return new PortalStop(410, 'gone', 'This link has expired', 'This link has expired. Ask for a new one, sign in with your Portal account, or find your account with your details.', undefined, [
      { href: `${base}/sign-in?${query}`, text: 'Sign in' },
      { href: `${base}/?${query}`, text: 'Find my account' },
    ]);
  }
}

/** Opens `portal_url`: a new browser session, its cookie, and the page without the token. */
export async function enterByLink(deps: AppDeps, scope: PortalScope, token: string, page: string, req: Request, res: Response): Promise<void> {
  const opened = await linkEntry(deps).openEntry(token, page);
  if ('redirect' in opened) {
    res.redirect(302, opened.redirect);
    return;
  }
  const { session } = opened;
  const repo = browserSessionRepo(deps.db);
  // One browser, one visit: a link opened over an earlier one replaces it.
  const previous = readCookie(req, BROWSER_SESSION_COOKIE);
  if (previous) {
    const old = await repo.findByTokenHash(hashToken(previous));
    if (old) await repo.delete(old.id);
  }
  const secret = newSecret();
  await repo.insert(tenantOfCustomerSession(session), hashToken(secret), {
    customer_session_id: session.id,
    customer_id: session.customer_id,
    csrf_token: newSecret(),
  });
  setBrowserSessionCookie(res, scope, secret);
  rememberOrganization(res, scope, session);
  deviceId(req, res, scope);
  res.redirect(303, `${scope.base}${page}`);
}

/** The visit of this request's cookie, or a stop: signed out, expired. */
export async function visitOf(deps: AppDeps, scope: PortalScope, req: Request, res: Response): Promise<Visit> {
  const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
  const repo = browserSessionRepo(deps.db);
  const browser = cookie ? await repo.findByTokenHash(hashToken(cookie)) : undefined;
  if (!browser) throw signedOut(scope.base, req);
  const tenant = await withClock(deps.db, tenantOfBrowser(browser));
  const now = nowFor(deps.clock, tenant);
  let session: CustomerSessionRow | undefined;
  if (browser.customer_session_id) {
    const found = await customerSessionLinkRepo(deps.db).findById(browser.customer_session_id);
    if (!found) throw signedOut(scope.base, req);
    session = await useCustomerSession(deps, found);
    if (!session) {
      await repo.delete(browser.id);
      clearBrowserSessionCookie(res, scope);
      throw expiredStop(found, scope.base);
    }
  } else {
    if (browser.expires_at && browser.expires_at.getTime() <= now.getTime()) {
      await repo.delete(browser.id);
      clearBrowserSessionCookie(res, scope);
      const query = `organization=${browser.organization_id}${browser.environment === 'sandbox' ? '&environment=sandbox' : ''}`;
      throw new PortalStop(410, 'gone', 'Your visit has ended', 'You were away for a while, so we ended your visit to keep your details safe.', undefined, [
        { href: `${scope.base}/sign-in?${query}`, text: 'Sign in' },
        { href: `${scope.base}/?${query}`, text: 'Find my account' },
      ]);
    }
    const expiresAt = new Date(now.getTime() + GUEST_IDLE_MINUTES * 60_000);
    await repo.update(browser.id, { expires_at: expiresAt });
    browser.expires_at = expiresAt;
  }
  // Every date the page shows is the debtor's (the communications' zone), not UTC.
  res.locals[ZONE_LOCAL] = await debtorZone(deps.db, tenant, browser.customer_id);
  res.locals[ORGANIZATION_LOCAL] = `organization=${browser.organization_id}${browser.environment === 'sandbox' ? '&environment=sandbox' : ''}`;
  return { browser, customerSession: session, tenant, now, deviceId: deviceId(req, res, scope) };
}

/** A guest's first request: a browser session for the organization the Portal's root names. */
export async function startGuest(deps: AppDeps, scope: PortalScope, tenant: Tenant, res: Response): Promise<BrowserSessionRow> {
  const secret = newSecret();
  const now = nowFor(deps.clock, await withClock(deps.db, tenant));
  const row = await browserSessionRepo(deps.db).insert(tenant, hashToken(secret), {
    csrf_token: newSecret(),
    expires_at: new Date(now.getTime() + GUEST_IDLE_MINUTES * 60_000),
  });
  setBrowserSessionCookie(res, scope, secret);
  rememberOrganization(res, scope, row);
  return row;
}

/**
 * Signing in with a Portal account opens a browser session like a found guest's (its customer,
 * verified, ending after a quiet while): a new one, under a new cookie, replacing this browser's
 * earlier one, so no cookie known before signing in is worth anything after.
 */
export async function openSignedIn(trx: Knex, scope: PortalScope, tenant: Tenant, req: Request, res: Response, values: { customer_id: string; portal_account_id: string; now: Date }): Promise<void> {
  const repo = browserSessionRepo(trx);
  const previous = readCookie(req, BROWSER_SESSION_COOKIE);
  const old = previous ? await repo.findByTokenHash(hashToken(previous)) : undefined;
  if (old) await repo.delete(old.id);
  const secret = newSecret();
  await repo.insert(tenant, hashToken(secret), {
    csrf_token: newSecret(),
    customer_id: values.customer_id,
    portal_account_id: values.portal_account_id,
    verified_at: values.now,
    expires_at: new Date(values.now.getTime() + GUEST_IDLE_MINUTES * 60_000),
  });
  setBrowserSessionCookie(res, scope, secret);
  rememberOrganization(res, scope, { organization_id: tenant.organizationId, environment: tenant.environment });
}

/**
 * Signing out: this browser's session row is deleted (its cookie's token is worth nothing
 * after) and the cookie cleared. A link's customer session is left as it is: the link is the
 * credential until it expires. Answers the row that was ended, for the page's way back.
 */
export async function signOut(deps: AppDeps, scope: PortalScope, req: Request, res: Response): Promise<BrowserSessionRow | undefined> {
  const cookie = readCookie(req, BROWSER_SESSION_COOKIE);
  const repo = browserSessionRepo(deps.db);
  const browser = cookie ? await repo.findByTokenHash(hashToken(cookie)) : undefined;
  if (browser) await repo.delete(browser.id);
  clearBrowserSessionCookie(res, scope);
  return browser;
}
