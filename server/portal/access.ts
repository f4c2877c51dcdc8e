/**
 * What a browser session may do: the one rule every Portal page (and the Portal API) asks.
 *
 * A debtor is one debtor however they came in. A link's customer session (verified when the
 * link asks for it) and a Portal account's session (signed in with e-mail and password, hence
 * verified) may do everything for the customer's accounts: pay now or later, a payment plan,
 * autopay, saved cards and bank accounts, settlement offers in every way they allow, disputes,
 * documents, "Contact us". A guest who found their account ("Find my account", "Pay with your
 * account number", the guest dispute) proved one fact and holds no credential to come back
 * with: they pay once today, dispute, read documents and write to us, but keep nothing (no
 * saved method, no plan, no autopay, nothing scheduled). A guest who found nothing may only
 * write to us. A page a session may not use says why and where it can go instead.
 */
import type { CustomerSessionRow } from '../customer-sessions/customer-session-repo';
import type { BrowserSessionRow } from './browser-session-repo';
import { PortalStop, type PageLink } from './page-error';

/** What the rule reads of a visit (browser-sessions.ts's `Visit`): its browser session and a link's customer session. */
interface Sessions {
  browser: BrowserSessionRow;
  customerSession: CustomerSessionRow | undefined;
}

export type Standing = 'link' | 'portal-account' | 'found-guest' | 'guest';

export type Feature =
  /** The customer's accounts, their details, payments and receipts. */
  | 'accounts'
  /** A one-time payment today. */
  | 'pay'
  /** What needs a credential to come back with: a saved method, a later day, a plan, autopay, a settlement over time. */
  | 'keep'
  | 'disputes'
  | 'documents'
  /** "Contact us" (a guest writes too, giving an e-mail address). */
  | 'contact';

const EVERYTHING: readonly Feature[] = ['accounts', 'pay', 'keep', 'disputes', 'documents', 'contact'];

const ALLOWED: Record<Standing, readonly Feature[]> = {
  link: EVERYTHING,
  'portal-account': EVERYTHING,
  'found-guest': ['accounts', 'pay', 'disputes', 'documents', 'contact'],
  guest: ['contact'],
};

/** How this browser session came in. A link's session waiting for verification is still a link's. */
export function standingOf(visit: Sessions): Standing {
  if (visit.customerSession) return 'link';
  if (visit.browser.portal_account_id && visit.browser.customer_id) return 'portal-account';
  if (visit.browser.customer_id && visit.browser.verified_at) return 'found-guest';
  return 'guest';
}

/** A link asking for verification, not yet answered: every page of the customer waits for it. */
export function needsVerification(visit: Sessions): boolean {
  return Boolean(visit.customerSession?.verification) && !visit.browser.verified_at;
}

/** The one question: may this visit use `feature` now? */
export function may(visit: Sessions, feature: Feature): boolean {
  if (needsVerification(visit)) return false;
  return ALLOWED[standingOf(visit)].includes(feature);
}

/** A guest pays once (no saved methods, no plan): anyone who may not keep anything. */
export function isGuest(visit: Sessions): boolean {
  return !may(visit, 'keep');
}

/** Signed in for the header (its "My accounts", "Contact us" and "Sign out"): a customer known and verified. */
export function signedIn(visit: Sessions): boolean {
  return may(visit, 'accounts');
}

const organizationQuery = (visit: Pick<Sessions, 'browser'>) =>
  `organization=${visit.browser.organization_id}${visit.browser.environment === 'sandbox' ? '&environment=sandbox' : ''}`;

/** Why a page is closed to this visit, and where it can go: a stop to throw (a redirect, or a page that says so). */
export function refusal(visit: Sessions, feature: Feature, base: string, path: string, back?: PageLink): PortalStop {
  if (needsVerification(visit)) return new PortalStop(303, 'forbidden', 'Confirm it is you', 'Please confirm it is you first.', `${base}/verify?next=${encodeURIComponent(path)}`);
  const standing = standingOf(visit);
  const query = organizationQuery(visit);
  if (standing === 'guest') {
    return new PortalStop(403, 'forbidden', 'Please sign in first', 'This page shows your accounts, so we need to know who you are: sign in with your Portal account, or find your account with your details.', undefined, [
      { href: `${base}/sign-in?${query}`, text: 'Sign in' },
      { href: `${base}/?${query}`, text: 'Find my account' },
    ]);
  }
  const what = feature === 'keep' ? 'Saving a card or bank account, paying on a later day, payment plans and autopay need' : 'This page needs';
  return new PortalStop(
    403,
    'forbidden',
    'Sign in to use this',
    `${what} a Portal account (or the link your creditor sent you), so that only you can come back to them. You found your account with your details: you can pay in full or in part today, or create an account to do more.`,
    undefined,
    [back ?? { href: `${base}/accounts`, text: 'Your accounts' }, { href: `${base}/register?${query}`, text: 'Create an account' }],
  );
}

/** Throws the refusal unless the visit may use `feature`. */
export function requireAccess(visit: Sessions, feature: Feature, base: string, path: string, back?: PageLink): void {
  if (!may(visit, feature)) throw refusal(visit, feature, base, path, back);
}
