/**
 * The Portal's pages for Portal accounts and one-step checkout, beside "Find my account" at the
 * guest entry: "Create an account" (the guest lookup's verification step, then an e-mail and a
 * password), the e-mailed confirmation link, "Sign in", "Forgot password" and its reset link,
 * and "Pay with your account number". The rules live in server/portal-logins/ and guest.ts;
 * these handlers read the form, call them, record the tracking events and render.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { register, confirmEmail } from '../portal-logins/registration';
import { signIn } from '../portal-logins/sign-in';
import { requestReset, resetPassword } from '../portal-logins/password-reset';
import { linkState, type LinkUse } from '../portal-logins/account-links';
import { MAX_SIGN_IN_FAILURES } from '../portal-logins/sign-in-lock';
import { openSignedIn, signOut, visitOf, type PortalScope, type Visit } from './browser-sessions';
import { browserSessionRepo } from './browser-session-repo';
import { guestBrowser, tenantOfQuery, tenantQuery } from './guest-pages';
import { guestFinder, NO_MATCH, type GuestStep } from './guest';
import { formErrorsOf, type Form, type FormErrors } from './payment-form';
import { renderPage } from './render';
import type { PageLink } from './page-error';
import { track } from './tracking';
import { clockTime, debtorZone } from './debtor-zone';

const REGISTRATION: GuestStep = { success: 'guest.registration.verification.success', failed: 'guest.registration.verification.failed' };

export function signInRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const base = scope.base;
  const finder = guestFinder(deps);

  const page = (res: Response, status: number, view: string, title: string, csrf: string | undefined, data: object) => renderPage(res, status, view, title, { base, csrf }, data);
  const message = (res: Response, status: number, title: string, text: string, link?: PageLink | PageLink[]) => page(res, status, 'message', title, undefined, { message: text, link });
  const signInLink = (tenant: Pick<Tenant, 'organizationId' | 'environment'>) => `${base}/sign-in?${tenantQuery({ organization_id: tenant.organizationId, environment: tenant.environment })}`;
  const activity = (visit: Visit) => ({ deviceId: visit.deviceId, occurredAt: visit.now });

  /** A guest form's answer to a verification step's refusal (422 for the form, 429 for the limits). */
  function refused(res: Response, error: unknown, show: (status: number, errors: FormErrors) => void): void {
    if (error instanceof ApiError && error.errorCode === 'rate_limited') {
      res.set(error.headers);
      return show(429, { form: error.message });
    }
    if (error instanceof ApiError && error.status === 422) return show(422, formErrorsOf(error.fieldErrors));
    throw error;
  }

  /** The refusal of a link that no longer works: what happened and what to do. */
  function deadLink(res: Response, use: Exclude<LinkUse, { ok: true }>, kind: 'confirm' | 'reset'): void {
    const what = use.reason === 'used' ? 'This link was already used' : use.reason === 'expired' ? 'This link has expired' : 'This link does not work';
    const query = use.tenant ? `?${tenantQuery({ organization_id: use.tenant.organizationId, environment: use.tenant.environment })}` : '';
    if (use.reason === 'confirmed') {
      return message(res, 200, 'Your e-mail is already confirmed', 'This address is confirmed already (we may have sent you more than one link). Sign in with your e-mail and password.', { href: `${base}/sign-in${query}`, text: 'Sign in' });
    }
    if (kind === 'confirm') {
      return message(res, 410, what, `${what}. Links work once, for one hour. Sign in with your e-mail and password: if your address is not confirmed yet, we send you a new link.`, { href: `${base}/sign-in${query}`, text: 'Sign in' });
    }
    return message(res, 410, what, `${what}. Links to reset a password work once, for one hour. Ask for a new one.`, { href: `${base}/forgot-password${query}`, text: 'Send me a new link' });
  }

  // ---- sign out: the browser session ends here, server-side
  router.post('/sign-out', async (req, res) => {
    const ended = await signOut(deps, scope, req, res);
    // The ways back in, beside each other: a signed-out page offers "Sign in" as well as "Find my account".
    const back = ended ? [{ href: `${base}/sign-in?${tenantQuery(ended)}`, text: 'Sign in' }, { href: `${base}/?${tenantQuery(ended)}`, text: 'Find my account' }] : undefined;
    message(res, 200, 'You are signed out', 'You are signed out. To come back, sign in with your Portal account, find your account with your details, or open the link from your message again.', back);
  });

  // ---- create an account: verify, then e-mail and password
  router.get('/register', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    page(res, 200, 'register', 'Create an account', browser.csrf_token, { form: {}, errors: {} });
  });

  router.post('/register/verify', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    const form = req.body as Form;
    const show = (status: number, errors: FormErrors) => page(res, status, 'register', 'Create an account', visit.browser.csrf_token, { form: { phone: form.phone, first_name: form.first_name, last_name: form.last_name }, errors });
    try {
      const answers = { phone: form.phone, first_name: form.first_name, last_name: form.last_name, ssn_last4: form.ssn_last4, date_of_birth: form.date_of_birth, postal_code: form.postal_code };
      if (await finder.find(visit, req.ip ?? 'unknown', answers, REGISTRATION)) return res.redirect(303, `${base}/register/account`);
      show(422, { form: NO_MATCH });
    } catch (error) {
      refused(res, error, show);
    }
  });

  const verifiedGuest = async (req: Request, res: Response): Promise<Visit | undefined> => {
    const visit = await visitOf(deps, scope, req, res);
    if (visit.customerSession || !visit.browser.customer_id || !visit.browser.verified_at) {
      res.redirect(303, `${base}/register?${tenantQuery(visit.browser)}`);
      return undefined;
    }
    return visit;
  };

  router.get('/register/account', async (req, res) => {
    const visit = await verifiedGuest(req, res);
    if (visit) page(res, 200, 'register-account', 'Choose your sign-in', visit.browser.csrf_token, { form: {}, errors: {} });
  });

  router.post('/register/account', async (req, res) => {
    const visit = await verifiedGuest(req, res);
    if (!visit) return;
    const form = req.body as Form;
    const customerId = visit.browser.customer_id!;
    const tied = { ...activity(visit), customerId };
    const outcome = await register(deps, visit.tenant, customerId, { email: String(form.email ?? ''), password: String(form.password ?? '') }, visit.now, (trx) =>
      track(trx, deps.events, visit.tenant, [{ event: 'guest.registration.success', ...tied }]),
    );
    if (!outcome.ok) {
      await track(deps.db, deps.events, visit.tenant, [{ event: 'guest.registration.failed', ...tied }]);
      return page(res, 422, 'register-account', 'Choose your sign-in', visit.browser.csrf_token, { form: { email: form.email }, errors: formErrorsOf(outcome.errors) });
    }
    message(res, 201, 'Check your e-mail', `We sent a link to ${outcome.account.email}. Open it within one hour to confirm your address, then sign in.`, { href: signInLink(visit.tenant), text: 'Sign in' });
  });

  router.get('/confirm-email', async (req, res) => {
    const use = await confirmEmail(deps, String(req.query.token ?? ''));
    if (!use.ok) return deadLink(res, use, 'confirm');
    message(res, 200, 'Your e-mail is confirmed', 'Thank you. You can now sign in with your e-mail and password.', { href: signInLink(use.tenant), text: 'Sign in' });
  });

  // ---- sign in
  router.get('/sign-in', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    page(res, 200, 'sign-in', 'Sign in', browser.csrf_token, { form: {}, errors: {}, query: tenantQuery(browser) });
  });

  router.post('/sign-in', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    const form = req.body as Form;
    const outcome = await signIn(deps, visit.tenant, { email: String(form.email ?? ''), password: String(form.password ?? '') }, visit.now, async (trx, account) => {
      await openSignedIn(trx, scope, visit.tenant, req, res, { customer_id: account.customer_id, portal_account_id: account.id, now: visit.now });
      await track(trx, deps.events, visit.tenant, [{ event: 'customer.login.success', ...activity(visit), customerId: account.customer_id }]);
    });
    if (outcome.kind === 'signed_in') return res.redirect(303, `${base}/accounts`);
    await track(deps.db, deps.events, visit.tenant, [{ event: 'customer.login.failed', ...activity(visit), customerId: outcome.account?.customer_id }]);
    const show = (status: number, text: string) => page(res, status, 'sign-in', 'Sign in', visit.browser.csrf_token, { form: { email: form.email }, errors: { form: text }, query: tenantQuery(visit.browser) });
    if (outcome.kind === 'locked') {
      const minutes = Math.max(1, Math.ceil((outcome.until.getTime() - visit.now.getTime()) / 60_000));
      // The organization's zone, whoever typed the address: the owner's own zone would tell that the address has an account, and where.
      const time = clockTime(outcome.until, await debtorZone(deps.db, visit.tenant));
      res.set('Retry-After', String(Math.max(1, Math.ceil((outcome.until.getTime() - visit.now.getTime()) / 1000))));
      return show(429, `For your security, signing in with this e-mail is locked after ${MAX_SIGN_IN_FAILURES} wrong tries. Try again after ${time} (in ${minutes} minute${minutes === 1 ? '' : 's'}), or use "Forgot password".`);
    }
    if (outcome.kind === 'unconfirmed') return show(403, 'Please confirm your e-mail first. We sent you a new link; open it, then sign in.');
    show(401, 'The e-mail or the password is not right. Check them and try again.');
  });

  // ---- forgot password
  router.get('/forgot-password', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    page(res, 200, 'forgot-password', 'Forgot password', browser.csrf_token, { query: tenantQuery(browser) });
  });

  router.post('/forgot-password', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    await requestReset(deps, visit.tenant, { email: String((req.body as Form).email ?? ''), ip: req.ip ?? 'unknown' }, visit.now);
    message(res, 200, 'Check your e-mail', 'If a Portal account has this e-mail, we sent it a link to choose a new password. It works once, for one hour.', { href: signInLink(visit.tenant), text: 'Back to sign in' });
  });

  router.get('/reset-password', async (req, res) => {
    const token = String(req.query.token ?? '');
    const state = await linkState(deps, token, 'reset');
    if (!state.ok) return deadLink(res, state, 'reset');
    const browser = await guestBrowser(deps, scope, state.tenant, req, res);
    page(res, 200, 'reset-password', 'Choose a new password', browser.csrf_token, { token, errors: {} });
  });

  router.post('/reset-password', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    const form = req.body as Form;
    const token = String(form.token ?? '');
    const outcome = await resetPassword(deps, token, String(form.password ?? ''));
    if (!outcome.ok && outcome.reason === 'invalid') return page(res, 422, 'reset-password', 'Choose a new password', visit.browser.csrf_token, { token, errors: formErrorsOf(outcome.errors) });
    if (!outcome.ok) return deadLink(res, outcome, 'reset');
    // Whoever was signed in with the old password is signed out.
    await browserSessionRepo(deps.db).deleteOfPortalAccount(outcome.account.id);
    message(res, 200, 'Your password is changed', 'Sign in with your e-mail and your new password.', { href: signInLink(outcome.tenant), text: 'Sign in' });
  });

  // ---- one-step checkout
  router.get('/pay-by-account-number', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    page(res, 200, 'one-step', 'Pay with your account number', browser.csrf_token, { form: {}, errors: {} });
  });

  router.post('/pay-by-account-number', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    const form = req.body as Form;
    const show = (status: number, errors: FormErrors) => page(res, status, 'one-step', 'Pay with your account number', visit.browser.csrf_token, { form: { account_number: form.account_number }, errors });
    try {
      const accountId = await finder.findByAccountNumber(visit, req.ip ?? 'unknown', { account_number: form.account_number, date_of_birth: form.date_of_birth, ssn_last4: form.ssn_last4, postal_code: form.postal_code });
      if (accountId) return res.redirect(303, `${base}/accounts/${accountId}/checkout`);
      show(422, { form: NO_MATCH });
    } catch (error) {
      refused(res, error, show);
    }
  });

  return router;
}
