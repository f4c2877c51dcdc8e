/**
 * Autopay in the Portal: a customer with a saved payment method turns it on for one of their
 * accounts - the full balance or a custom amount, on a day of each month - changes it, or
 * stops it, whether they came by a link or signed in with their Portal account. The autopay module holds the rules (the payment terms decide the amount); this
 * file reads the form and renders. Every POST has passed the CSRF check (portal-router.ts).
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { autopayService } from '../autopay/autopay-service';
import { FIRST_DAY, LAST_DAY } from '../autopay/autopay-schedule';
import { autopaysOf, autopayToApi } from '../debt-accounts/account-autopay';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { requireAccess, signedIn } from './access';
import { centsOf, formErrorsOf, type Form, type FormErrors } from './payment-form';
import { portalAccounts } from './portal-accounts';
import { methodLabel } from './pages';
import { renderPage } from './render';
import { track } from './tracking';

export function autopayRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const accounts = portalAccounts(deps);
  const autopay = autopayService(deps);
  const { base } = scope;
  const context = (visit: Visit) => ({ base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) });

  /** A customer who may keep a saved method (a link's, or a Portal account's: access.ts); anyone else is told why. */
  const page = (handler: (req: Request, res: Response, visit: Visit) => Promise<void>) => async (req: Request, res: Response) => {
    const visit = await visitOf(deps, scope, req, res);
    requireAccess(visit, 'keep', base, req.originalUrl.split('?')[0]!, { href: `${base}/accounts/${encodeURIComponent(String(req.params.accountId))}`, text: 'Back to the account' });
    await handler(req, res, visit);
  };

  async function render(res: Response, visit: Visit, accountId: string, status: number, form: Form, errors: FormErrors, notice?: string) {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, accountId);
    const methods = await accounts.methods(visit.tenant, visit.browser.customer_id!, visit.now);
    const [current] = await autopaysOf(deps.db, visit.tenant, [view.account.id]);
    renderPage(res, status, 'autopay', 'Autopay', context(visit), {
      view,
      autopay: current ? autopayToApi(current) : null,
      methods: methods.map((method) => ({ id: method.id, label: methodLabel(method) })),
      days: Array.from({ length: LAST_DAY - FIRST_DAY + 1 }, (_, i) => FIRST_DAY + i),
      form,
      errors,
      notice,
    });
  }

  router.get('/accounts/:accountId/autopay', page(async (req, res, visit) => {
    const [current] = await autopaysOf(deps.db, visit.tenant, [String(req.params.accountId)].filter((id) => /^[0-9a-f-]{36}$/i.test(id)));
    const form: Form = current
      ? { amount_type: current.amount_type, amount: current.amount ? (Number(current.amount) / 100).toFixed(2) : '', day_of_month: String(current.day_of_month), method: current.payment_method_id ?? '' }
      : { amount_type: 'full_balance' };
    await render(res, visit, String(req.params.accountId), 200, form, {});
  }));

  router.post('/accounts/:accountId/autopay', page(async (req, res, visit) => {
    const form = req.body as Form;
    const accountId = String(req.params.accountId);
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, accountId);
    const custom = form.amount_type === 'custom';
    const amount = custom ? centsOf(form.amount) : null;
    if (custom && amount === undefined) return render(res, visit, accountId, 422, form, { amount: 'Enter an amount in dollars, for example 50.00.' });
    try {
      await autopay.turnOn(
        visit.tenant,
        { customerId: visit.browser.customer_id!, now: visit.now },
        view.account.id,
        { amount_type: custom ? 'custom' : 'full_balance', amount: amount ?? null, day_of_month: Number(form.day_of_month), payment_method_id: String(form.method ?? '') },
        async (trx, id) => {
          if (!custom) return;
          await track(trx, deps.events, visit.tenant, [{ event: 'customer.checkout.autopay.custom.success', deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: id }]);
        },
      );
    } catch (error) {
      if (error instanceof ApiError && error.status === 422) return render(res, visit, accountId, 422, form, formErrorsOf(error.fieldErrors));
      throw error;
    }
    await render(res, visit, accountId, 200, form, {}, 'Autopay is on.');
  }));

  router.post('/accounts/:accountId/autopay/stop', page(async (req, res, visit) => {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    await autopay.stop(visit.tenant, view.account.id, visit.browser.customer_id!);
    await render(res, visit, view.account.id, 200, { amount_type: 'full_balance' }, {}, 'Autopay is off.');
  }));

  return router;
}
