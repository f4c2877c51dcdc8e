/**
 * The Portal's two cookies: the browser session (its value random, stored only as SHA-256)
 * and the device id that tracking events report. Both HttpOnly and SameSite=Lax, Secure
 * when the Portal is served over https, and scoped to the Portal's path.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';

export const BROWSER_SESSION_COOKIE = 'portal_session';
export const DEVICE_COOKIE = 'portal_device';
const DEVICE_DAYS = 730;

export interface CookieScope {
  path: string;
  secure: boolean;
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=') || undefined;
  }
  return undefined;
}

const options = (scope: CookieScope) => ({ httpOnly: true, sameSite: 'lax' as const, secure: scope.secure, path: scope.path || '/' });

/** A session cookie (no Max-Age): the browser session also ends when the browser closes. */
export function setBrowserSessionCookie(res: Response, scope: CookieScope, value: string): void {
  res.cookie(BROWSER_SESSION_COOKIE, value, options(scope));
}

export function clearBrowserSessionCookie(res: Response, scope: CookieScope): void {
  res.clearCookie(BROWSER_SESSION_COOKIE, options(scope));
}

/** The device id: the cookie's, or a new random one set for two years. */
export function deviceId(req: Request, res: Response, scope: CookieScope): string {
  const known = readCookie(req, DEVICE_COOKIE);
  if (known && /^[A-Za-z0-9_-]{22}$/.test(known)) return known;
  const id = randomBytes(16).toString('base64url');
  res.cookie(DEVICE_COOKIE, id, { ...options(scope), maxAge: DEVICE_DAYS * 86_400_000 });
  return id;
}

/**
 * The organization this browser last visited the Portal of (`<id>` or `<id>.sandbox`), kept
 * two years like the device id: after signing out, or when a session has ended, a page can
 * still offer "Sign in" and "Find my account" of that organization. It names an organization
 * (as every guest page's address does), nothing about the person.
 */
export const ORGANIZATION_COOKIE = 'portal_org';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function rememberOrganization(res: Response, scope: CookieScope, tenant: { organization_id: string; environment: string }): void {
  res.locals.organizationQuery = `organization=${tenant.organization_id}${tenant.environment === 'sandbox' ? '&environment=sandbox' : ''}`;
  res.cookie(ORGANIZATION_COOKIE, `${tenant.organization_id}${tenant.environment === 'sandbox' ? '.sandbox' : ''}`, { ...options(scope), maxAge: DEVICE_DAYS * 86_400_000 });
}

/** The remembered organization as a guest page's query (`organization=…[&environment=sandbox]`), or undefined. */
export function rememberedOrganization(req: Request): string | undefined {
  const [id = '', environment] = (readCookie(req, ORGANIZATION_COOKIE) ?? '').split('.');
  if (!UUID.test(id)) return undefined;
  return `organization=${id.toLowerCase()}${environment === 'sandbox' ? '&environment=sandbox' : ''}`;
}

export const newSecret = (): string => randomBytes(32).toString('base64url');
