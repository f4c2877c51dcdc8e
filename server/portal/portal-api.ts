/**
 * The Portal API: the pages' own services behind thin JSON routes, for frontend teams who
 * build their own pages. The browser session cookie authenticates; the CSRF token of
 * `GET /api/session` (`X-CSRF-Token`) goes with every POST (portal-router.ts checks it).
 */
import { Router, type Request, type Response } from 'express';
import type { components } from '../../generated/portal';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { portalAccountSessionToApi, portalSessionToApi } from '../customer-sessions/customer-session-mapper';
import { todayUtc } from '../kernel/dates';
import { chargeService } from '../payments/charge-service';
import { needsVerification, visitOf, type PortalScope, type Visit } from './browser-sessions';
import { may } from './access';
import { pay, setUpPlan, suggestedPlan } from './checkout';
import { portalAccounts, viewOf, type AccountDetail, type AccountView } from './portal-accounts';
import { sentence } from './payment-form';
import { planRefusal } from '../payment-terms/payment-intent';
import { verify } from './verification';
import { paymentKeyOf } from './payment-key';

type S = components['schemas'];

function accountToApi(view: AccountView): S['PortalAccount'] {
  const { account } = view;
  return {
    id: account.id,
    external_id: account.external_id,
    external_account_number: account.external_account_number,
    status: account.status as S['PortalAccount']['status'],
    balance: Number(account.balance),
    current_balance: view.balance,
    payable: view.payable,
    billing_options: view.options,
    min_payment_amount: view.minimum,
  };
}

function detailToApi(detail: AccountDetail): S['PortalAccountDetail'] {
  return {
    ...accountToApi(detail),
    // The customer pays the parent: a child is shown, never offered for payment.
    children: detail.children.map((child) => accountToApi({ ...viewOf(child), payable: false, options: [], minimum: 0 })),
    charges: detail.charges,
    transactions: detail.transactions,
    payment_plan: detail.plan ?? null,
  };
}

export function portalApiRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const accounts = portalAccounts(deps);

  /** A visit that may see the customer's accounts: found, and verified when the session asks for it. */
  const signedIn = async (req: Request, res: Response): Promise<Visit> => {
    const visit = await visitOf(deps, scope, req, res);
    if (needsVerification(visit)) throw new ApiError('forbidden', 'Verify the customer first (POST /api/verification).');
    if (!visit.browser.customer_id) throw new ApiError('forbidden', 'Find the guest\'s account first ("Find my account").');
    return visit;
  };

  async function sessionAnswer(visit: Visit): Promise<S['PortalSession']> {
    if (!visit.customerSession && visit.browser.portal_account_id && visit.browser.customer_id) {
      const customer = await customerRepo(deps.db, visit.tenant).find(visit.browser.customer_id);
      if (!customer) throw ApiError.notFound('Customer');
      return portalAccountSessionToApi(customer, visit.browser.expires_at);
    }
    if (!visit.customerSession) throw ApiError.notFound('Customer session');
    const customer = await customerRepo(deps.db, visit.tenant).find(visit.customerSession.customer_id);
    const account = visit.customerSession.debt_account_id ? await debtAccountRepo(deps.db, visit.tenant).find(visit.customerSession.debt_account_id) : undefined;
    if (!customer) throw ApiError.notFound('Customer');
    // Withheld until verified, as the pages are.
    return portalSessionToApi({ ...visit.customerSession, verification: needsVerification(visit) }, customer, account);
  }

  router.get('/session', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    res.set('X-CSRF-Token', visit.browser.csrf_token).json({ data: await sessionAnswer(visit) });
  });

  router.get('/accounts', async (req, res) => {
    const visit = await signedIn(req, res);
    res.json({ data: (await accounts.list(visit.tenant, visit.browser.customer_id!)).map(accountToApi) });
  });

  router.get('/accounts/:accountId', async (req, res) => {
    const visit = await signedIn(req, res);
    res.json({ data: detailToApi(await accounts.detail(visit.tenant, visit.browser.customer_id!, String(req.params.accountId))) });
  });

  router.post('/accounts/:accountId/payments', async (req, res) => {
    const visit = await signedIn(req, res);
    const body = req.body as S['PortalPaymentCreate'];
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    // The account is the path's, not a field: an account that takes no payment is a 409 here.
    if (view.refusal) throw ApiError.conflict(sentence(view.refusal.message));
    const { amount, scheduled_at: scheduledAt, save_payment_method: save, payment_method_id, card, ach } = body;
    const way = { payment_method_id, card, ach };
    const paid = await pay(deps, visit, view, { amount, way, save: save ?? false, scheduledAt, paymentKey: paymentKeyOf(req.get('idempotency-key'), `/api/accounts/${view.account.id}/payments`) });
    if (paid.declined) {
      const error = paid.declined;
      res.status(error.status).json({ ...error.body(), charge_id: paid.charge.id });
      return;
    }
    const after = await accounts.find(visit.tenant, visit.browser.customer_id!, view.account.id);
    const charge = await chargeService(deps).find(visit.tenant, paid.charge.id);
    // The gateway's answer not yet recorded: 202, as POST /charges answers it.
    res.status(charge.status === 'processing' ? 202 : 201).json({ data: { charge, current_balance: after.balance } });
  });

  router.post('/accounts/:accountId/payment-plan', async (req, res) => {
    const visit = await signedIn(req, res);
    if (!may(visit, 'keep')) throw new ApiError('forbidden', 'A guest makes one-time payments only: a payment plan needs the link from the creditor or a Portal account.');
    const body = req.body as S['PortalPlanCreate'];
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    const refusal = planRefusal(view.account, view);
    if (refusal) throw ApiError.conflict(sentence(refusal));
    const suggestion = suggestedPlan(view, todayUtc(visit.now));
    const suggested = body.frequency === suggestion.frequency && body.start_date === suggestion.start_date && body.amount === suggestion.amount;
    const way = { payment_method_id: body.payment_method_id, card: body.card, ach: body.ach };
    const plan = await setUpPlan(deps, visit, view, { frequency: body.frequency, start_date: body.start_date, amount: body.amount, way, suggested });
    res.status(201).json({ data: plan });
  });

  router.post('/verification', async (req, res) => {
    const visit = await visitOf(deps, scope, req, res);
    if (!visit.customerSession) throw ApiError.notFound('Customer session');
    if (needsVerification(visit)) {
      const ok = await verify(deps, visit, req.body as S['PortalVerification']);
      if (!ok) throw ApiError.field('form', 'does not match what is on file');
      visit.browser.verified_at = visit.now;
    }
    res.json({ data: await sessionAnswer(visit) });
  });

  return router;
}
