/**
 * "Dispute a debt" at the guest entry: one verification step, the guest lookup's (guest.ts:
 * same answers, same limits, its own events); then the guest chooses which of the customer's
 * accounts to dispute (a list, skipped when there is one), and fills in the dispute form of the
 * signed-in flow (reason, details, an optional file); filing it records a dispute in writing
 * (Regulation F comment 38-1) with `source: 'guest'` and `guest.dispute.created`, and opens the
 * dispute's page (dispute-pages.ts), which the verified browser session may see.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { signedIn } from './access';
import { accountLabel, fileDisputeFromForm, openDisputeOf, renderDisputeForm } from './dispute-pages';
import { guestBrowser, tenantOfQuery, tenantQuery } from './guest-pages';
import { guestFinder, NO_MATCH, type GuestStep } from './guest';
import { PortalStop } from './page-error';
import { formErrorsOf, type Form, type FormErrors } from './payment-form';
import { portalAccounts } from './portal-accounts';
import { renderPage } from './render';
import { track } from './tracking';

const GUEST_DISPUTE: GuestStep = { success: 'guest.dispute.registration.verification.success', failed: 'guest.dispute.registration.verification.failed' };

const STEP = {
  heading: 'Dispute a debt',
  intro: 'First, confirm it is you: your phone number, or your first and last name, and one more detail we have on file.',
  action: '/dispute-a-debt',
  button: 'Continue',
};

export function guestDisputeRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const base = scope.base;
  const finder = guestFinder(deps);
  const accounts = portalAccounts(deps);

  const verification = (res: Response, visit: Pick<Visit, 'browser'>, status: number, form: Form, errors: FormErrors) =>
    renderPage(res, status, 'guest', 'Dispute a debt', { base, csrf: visit.browser.csrf_token }, { form, errors, query: tenantQuery(visit.browser), step: STEP });

  router.get('/dispute-a-debt', async (req, res) => {
    const browser = await guestBrowser(deps, scope, await tenantOfQuery(deps, req), req, res);
    verification(res, { browser }, 200, {}, {});
  });

  router.post('/dispute-a-debt', async (req: Request, res: Response) => {
    const visit = await visitOf(deps, scope, req, res);
    if (visit.customerSession) throw new PortalStop(409, 'conflict', 'You are signed in', 'You opened a link from your creditor: dispute the debt from its account page.', undefined, { href: `${base}/accounts`, text: 'See your accounts' });
    const form = req.body as Form;
    // What is shown again: the names and phone, never the SSN digits or the date of birth.
    const kept = { phone: form.phone, first_name: form.first_name, last_name: form.last_name };
    const answers = { ...kept, ssn_last4: form.ssn_last4, date_of_birth: form.date_of_birth, postal_code: form.postal_code };
    try {
      if (await finder.find(visit, req.ip ?? 'unknown', answers, GUEST_DISPUTE)) return res.redirect(303, `${base}/dispute-a-debt/accounts`);
      verification(res, visit, 422, kept, { form: NO_MATCH });
    } catch (error) {
      if (error instanceof ApiError && error.errorCode === 'rate_limited') {
        res.set(error.headers);
        return verification(res, visit, 429, kept, { form: error.message });
      }
      if (error instanceof ApiError && error.status === 422) return verification(res, visit, 422, kept, formErrorsOf(error.fieldErrors));
      throw error;
    }
  });

  /** The verified guest of this browser session; anyone else is sent to verify first. */
  async function verifiedGuest(req: Request, res: Response): Promise<{ visit: Visit; customerId: string } | undefined> {
    const visit = await visitOf(deps, scope, req, res);
    const { customer_id: customerId, verified_at: verifiedAt } = visit.browser;
    if (visit.customerSession || !customerId || !verifiedAt) {
      res.redirect(303, `${base}/dispute-a-debt?${tenantQuery(visit.browser)}`);
      return undefined;
    }
    return { visit, customerId };
  }

  /** One of the verified guest's accounts (another's is a 404), or undefined once it led to the account's open dispute. */
  async function chosenAccount(req: Request, res: Response): Promise<{ visit: Visit; accountId: string; label: string } | undefined> {
    const guest = await verifiedGuest(req, res);
    if (!guest) return undefined;
    const view = await accounts.find(guest.visit.tenant, guest.customerId, String(req.params.accountId));
    const open = await openDisputeOf(deps, guest.visit.tenant, view.account.id);
    if (open) {
      res.redirect(303, `${base}/disputes/${open.id}`);
      return undefined;
    }
    return { visit: guest.visit, accountId: view.account.id, label: accountLabel(view.account) };
  }

  const context = (visit: Visit) => ({ base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) });
  const formAt = (accountId: string) => `${base}/dispute-a-debt/accounts/${accountId}`;
  const seeAccounts = { href: `${base}/accounts`, text: 'See your accounts' };

  /** The customer's accounts to choose from; with one only, its form (or its open dispute) at once. */
  router.get('/dispute-a-debt/accounts', async (req, res) => {
    const guest = await verifiedGuest(req, res);
    if (!guest) return;
    const views = await accounts.list(guest.visit.tenant, guest.customerId);
    if (views.length === 1) return res.redirect(303, formAt(views[0]!.account.id));
    const listed = await Promise.all(
      views.map(async (view) => ({ view, label: accountLabel(view.account), openDisputeId: (await openDisputeOf(deps, guest.visit.tenant, view.account.id))?.id })),
    );
    renderPage(res, 200, 'dispute-accounts', 'Which debt do you dispute?', context(guest.visit), { accounts: listed });
  });

  // The form's address before the guest chose an account: the choice.
  router.get('/dispute-a-debt/form', (_req, res) => res.redirect(303, `${base}/dispute-a-debt/accounts`));

  router.get('/dispute-a-debt/accounts/:accountId', async (req, res) => {
    const found = await chosenAccount(req, res);
    if (found) renderDisputeForm(res, context(found.visit), { action: formAt(found.accountId), label: found.label, back: seeAccounts });
  });

  router.post('/dispute-a-debt/accounts/:accountId', async (req, res) => {
    const found = await chosenAccount(req, res);
    if (!found) return;
    const { visit, accountId, label } = found;
    const id = await fileDisputeFromForm(deps, visit.tenant, accountId, req, res, {
      source: 'guest',
      within: (trx) =>
        track(trx, deps.events, visit.tenant, [{ event: 'guest.dispute.created', deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: accountId }]),
    }, (status, form, errors) => renderDisputeForm(res, context(visit), { action: formAt(accountId), label, back: seeAccounts }, status, form, errors));
    if (id) res.redirect(303, `${base}/disputes/${id}?filed=1`);
  });

  return router;
}
