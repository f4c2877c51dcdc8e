/**
 * The Portal's pages for a signed-in customer (or a found guest): thin handlers that read a
 * visit, call the Portal's services and render. Every POST has passed the CSRF check (portal-router.ts).
 */
import { randomBytes } from 'node:crypto';
import { validationNoticeRepo } from '../validation-notices/validation-notice-repo';
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { chargeService } from '../payments/charge-service';
import { todayUtc } from '../kernel/dates';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { isGuest, needsVerification, requireAccess, signedIn, type Feature } from './access';
import { pay, savesMethod, setUpPlan, suggestedPlan } from './checkout';
import { PortalStop } from './page-error';
import { centsOf, formErrorsOf, sentence, waysToPay, type Form, type FormErrors } from './payment-form';
import { portalAccounts, type AccountView } from './portal-accounts';
import { renderPage } from './render';
import { track } from './tracking';
import { lockMessage, offered, verify } from './verification';
import type { Frequency } from '../payment-plans/schedule';
import { addDays, isCalendarDate } from '../kernel/dates';
import { WINDOWS } from '../payment-terms/payment-terms';
import { paymentErrors, planRefusal } from '../payment-terms/payment-intent';
import type { PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { paymentKeyOf } from './payment-key';
import { unsignedCheckoutDocuments } from '../documents/document-signing';
import { ticketsOfCustomer } from '../tickets/ticket-thread';
import { pendingOfferOf } from '../settlement-offers/offer-reads';

type Handler = (req: Request, res: Response, visit: Visit) => Promise<void>;

export const FREQUENCIES: { value: Frequency; label: string }[] = [
  { value: 'weekly', label: 'Every week' },
  { value: 'every_other_week', label: 'Every other week' },
  { value: 'monthly', label: 'Every month' },
  { value: 'last_of_month', label: 'On the last day of each month' },
];

export function pagesRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const accounts = portalAccounts(deps);
  const base = scope.base;
  const context = (visit: Visit) => ({ base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) });

  /** A page of a customer: what the visit may use (access.ts) decides; the verification step itself waits for a customer only. */
  const page = (handler: Handler, { verifying = false, feature = 'accounts' as Feature } = {}) => async (req: Request, res: Response) => {
    const visit = await visitOf(deps, scope, req, res);
    if (!verifying) requireAccess(visit, feature, base, req.originalUrl.split('?')[0]!);
    else if (!visit.browser.customer_id) {
      res.redirect(303, `${base}/?organization=${visit.browser.organization_id}${visit.browser.environment === 'sandbox' ? '&environment=sandbox' : ''}`);
      return;
    }
    try {
      await handler(req, res, visit);
    } catch (error) {
      // A page of theirs that is not found still leads back to what they have.
      if (error instanceof PortalStop && error.status === 404 && !error.link) {
        throw new PortalStop(error.status, error.errorCode, error.title, error.message, error.redirect, { href: `${base}/accounts`, text: 'Your accounts' });
      }
      throw error;
    }
  };

  const customerId = (visit: Visit) => visit.browser.customer_id!;
  const accountOf = (req: Request, visit: Visit) => accounts.find(visit.tenant, customerId(visit), String(req.params.accountId));

  // ---- verification
  router.get('/verify', page(async (req, res, visit) => {
    if (!needsVerification(visit)) return res.redirect(303, `${base}/accounts`);
    const { lockedUntil } = await offered(deps, visit);
    if (lockedUntil) return renderLocked(res, visit, lockedUntil);
    renderVerify(res, visit, 200, {}, String(req.query.next ?? ''));
  }, { verifying: true }));

  router.post('/verify', page(async (req, res, visit) => {
    const form = req.body as Form;
    const next = String(form.next ?? '');
    if (!needsVerification(visit)) return res.redirect(303, `${base}/accounts`);
    try {
      const ok = await verify(deps, visit, { date_of_birth: form.date_of_birth, ssn_last4: form.ssn_last4, postal_code: form.postal_code });
      if (ok) return res.redirect(303, next.startsWith(`${base}/accounts`) && !next.includes('//') ? next : `${base}/accounts`);
      return renderVerify(res, visit, 422, { form: 'Those details do not match what we have on file. Please try again.' }, next);
    } catch (error) {
      if (error instanceof ApiError && error.errorCode === 'rate_limited') {
        const { lockedUntil } = await offered(deps, visit);
        if (lockedUntil) return renderLocked(res, visit, lockedUntil);
      }
      if (error instanceof ApiError && error.status === 422) return renderVerify(res, visit, 422, formErrorsOf(error.fieldErrors), next);
      throw error;
    }
  }, { verifying: true }));

  /** While verification is locked: said at once, with when to try again and whom to ask. */
  async function renderLocked(res: Response, visit: Visit, until: Date) {
    res.set('Retry-After', String(Math.max(1, Math.ceil((until.getTime() - visit.now.getTime()) / 1000))));
    renderPage(res, 429, 'message', 'Too many tries', context(visit), { message: await lockMessage(deps, visit, until) });
  }

  async function renderVerify(res: Response, visit: Visit, status: number, errors: FormErrors, next: string) {
    const { facts } = await offered(deps, visit);
    if (facts.length === 0) {
      return renderPage(res, 403, 'message', 'We cannot verify you here', context(visit), {
        message: 'We hold none of the details we would ask you for. Please contact the organization that sent you this link.',
      });
    }
    renderPage(res, status, 'verify', 'Confirm it is you', context(visit), { facts, errors, next });
  }

  // ---- accounts
  router.get('/accounts', page(async (_req, res, visit) => {
    const customer = await accounts.customer(visit.tenant, customerId(visit));
    const list = await accounts.list(visit.tenant, customerId(visit));
    const tickets = await ticketsOfCustomer(deps.db, visit.tenant, customerId(visit));
    renderPage(res, 200, 'accounts', 'Your accounts', context(visit), { customer, accounts: list, tickets });
  }));

  router.get('/accounts/:accountId', page(async (req, res, visit) => {
    const detail = await accounts.detail(visit.tenant, customerId(visit), String(req.params.accountId));
    const offerPlan =
      !isGuest(visit) && detail.options.includes('payment-plan') && !detail.hasOpenPlan && !visit.browser.plan_offer_closed;
    if (offerPlan) {
      await track(deps.db, deps.events, visit.tenant, [
        { event: 'customer.call-to-action.modal.displayed', deviceId: visit.deviceId, occurredAt: visit.now, customerId: customerId(visit), debtAccountId: detail.account.id },
      ]);
    }
    renderPage(res, 200, 'account', `Account ${detail.account.external_account_number ?? ''}`.trim(), context(visit), {
      detail,
      offerPlan,
      planCreated: req.query.plan === 'created',
      guest: isGuest(visit),
      settlementOffer: await pendingOfferOf(deps.db, visit.tenant, detail.account.id, visit.now),
      settlement: typeof req.query.settlement === 'string' ? req.query.settlement : undefined,
      validationNotice: await validationNoticeRepo(deps.db, visit.tenant).latestOf(detail.account.id),
    });
  }));

  // The banner's buttons: without JavaScript, a link (set up a plan) and a form (close).
  router.get('/accounts/:accountId/plan-offer', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    await track(deps.db, deps.events, visit.tenant, [
      { event: 'customer.call-to-action.modal.action-button.clicked', deviceId: visit.deviceId, occurredAt: visit.now, customerId: customerId(visit), debtAccountId: view.account.id },
    ]);
    res.redirect(303, `${base}/accounts/${view.account.id}/plan`);
  }));

  router.post('/accounts/:accountId/plan-offer/close', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    await deps.db('portal_browser_sessions').where({ id: visit.browser.id }).update({ plan_offer_closed: true });
    await track(deps.db, deps.events, visit.tenant, [
      { event: 'customer.call-to-action.modal.closed', deviceId: visit.deviceId, occurredAt: visit.now, customerId: customerId(visit), debtAccountId: view.account.id },
    ]);
    res.redirect(303, `${base}/accounts/${view.account.id}`);
  }));

  // ---- checkout
  async function renderCheckout(res: Response, visit: Visit, view: AccountView, status: number, form: Form, errors: FormErrors) {
    const methods = await savedMethods(visit);
    const payable = view.options.filter((option) => option !== 'payment-plan');
    renderPage(res, status, 'checkout', 'Make a payment', context(visit), {
      view,
      unsigned: await unsignedCheckoutDocuments(deps.db, visit.tenant, view.account.id),
      payable,
      offersPlan: !isGuest(visit) && view.options.includes('payment-plan'),
      methods,
      methodLabel,
      form,
      errors,
      guest: isGuest(visit),
      paymentKey: randomBytes(16).toString('hex'),
      today: todayUtc(visit.now),
      latestPayOn: addDays(todayUtc(visit.now), WINDOWS.portal.laterDayWithinDays),
      payLaterDays: WINDOWS.portal.laterDayWithinDays,
    });
  }

  router.get('/accounts/:accountId/checkout', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    if (!view.payable) throw notPayable(view, base);
    const payable = view.options.filter((option) => option !== 'payment-plan');
    if (payable.length === 0) return res.redirect(303, `${base}/accounts/${view.account.id}/plan`);
    await renderCheckout(res, visit, view, 200, { choice: payable.includes('full-amount-payment') ? 'full' : 'partial' }, {});
  }));

  router.post('/accounts/:accountId/pay', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    if (!view.payable) throw notPayable(view, base);
    const form = req.body as Form;
    const errors: FormErrors = {};
    let amount: number | undefined;
    if (form.choice === 'full') amount = view.balance;
    else if (form.choice === 'partial') {
      amount = centsOf(form.amount);
      if (amount === undefined) errors.amount = 'Enter an amount in dollars and cents, for example 25.00.';
    } else errors.choice = 'Choose how much to pay.';
    const methods = await savedMethods(visit);
    const way = waysToPay(form, errors, methods.map((method) => ({ id: method.id, label: `your ${methodLabel(method)}` })));
    const save = (form.method === 'card' && form.save_card === 'yes') || (form.method === 'ach' && form.save_ach === 'yes');
    const payOn = (form.pay_on ?? '').trim();
    if (payOn && !isCalendarDate(payOn)) errors.pay_on = 'Enter the date as YYYY-MM-DD.';
    if (form.policy !== 'accepted') errors.policy = 'Please accept the payment policy to continue.';
    if (way && amount !== undefined) {
      // The account's terms, as the payment itself will check them: every message at once.
      const intent = { amount, ...way, save_payment_method: savesMethod(visit, { save, way, scheduledAt: payOn || undefined }) || undefined, scheduled_at: payOn || undefined, guest: isGuest(visit) };
      for (const [field, message] of Object.entries(formErrorsOf(paymentErrors(view, intent, { channel: 'portal', today: todayUtc(visit.now) })))) errors[field] ??= message;
    }
    if (Object.keys(errors).length > 0 || !way || amount === undefined) return renderCheckout(res, visit, view, 422, safe(form), errors);
    try {
      const paid = await pay(deps, visit, view, { amount, way, save, scheduledAt: payOn || undefined, paymentKey: paymentKeyOf(/^[0-9a-f]{32}$/.test(form.payment_key ?? '') ? `portal-${visit.browser.id}-${form.payment_key}` : undefined, `/accounts/${view.account.id}/pay`) });
      if (paid.declined) {
        return renderCheckout(res, visit, view, 400, safe(form), {
          form: `Your payment was declined: ${paid.declined.message} Nothing was charged. Try another card or bank account.`,
        });
      }
      res.redirect(303, `${base}/accounts/${view.account.id}/receipts/${paid.charge.id}`);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        const message = error.fieldErrors ? formErrorsOf(error.fieldErrors) : { form: error.message };
        return renderCheckout(res, visit, view, error.status, safe(form), message);
      }
      throw error;
    }
  }));

  router.get('/accounts/:accountId/receipts/:chargeId', page(async (req, res, visit) => {
    const view = await accountOf(req, visit);
    const chargeId = String(req.params.chargeId);
    const charge = /^[0-9a-f-]{36}$/i.test(chargeId) ? await chargeService(deps).find(visit.tenant, chargeId).catch(() => undefined) : undefined;
    if (!charge || charge.customer_id !== customerId(visit) || charge.debt_account_id !== view.account.id) {
      throw new PortalStop(404, 'not_found', 'Receipt not found', 'We could not find this receipt.');
    }
    renderPage(res, 200, 'receipt', 'Thank you', context(visit), { view, charge, returnUrl: visit.customerSession?.return_url ?? null });
  }));

  // ---- payment plan
  async function renderPlan(res: Response, visit: Visit, view: AccountView, status: number, form: Form, errors: FormErrors) {
    const methods = await savedMethods(visit);
    const today = todayUtc(visit.now);
    const suggestion = suggestedPlan(view, today);
    renderPage(res, status, 'plan', 'Set up a payment plan', context(visit), {
      view,
      methods,
      methodLabel,
      frequencies: FREQUENCIES,
      suggestion,
      form: { frequency: suggestion.frequency, start_date: suggestion.start_date, plan_amount: (suggestion.amount / 100).toFixed(2), ...form },
      errors,
      latestStart: addDays(today, WINDOWS.portal.planStartWithinDays),
      today,
    });
  }

  const planAllowed = async (req: Request, visit: Visit): Promise<AccountView> => {
    const view = await accountOf(req, visit);
    requireAccess(visit, 'keep', base, req.originalUrl.split('?')[0]!, { href: `${base}/accounts/${view.account.id}`, text: 'Back to the account' });
    const refusal = planRefusal(view.account, view);
    if (refusal) throw new PortalStop(404, 'not_found', 'No payment plan here', sentence(refusal), undefined, { href: `${base}/accounts/${view.account.id}`, text: 'Back to the account' });
    return view;
  };

  router.get('/accounts/:accountId/plan', page(async (req, res, visit) => {
    await renderPlan(res, visit, await planAllowed(req, visit), 200, {}, {});
  }));

  router.post('/accounts/:accountId/plan', page(async (req, res, visit) => {
    const view = await planAllowed(req, visit);
    const form = req.body as Form;
    const errors: FormErrors = {};
    const frequency = FREQUENCIES.find((f) => f.value === form.frequency)?.value;
    if (!frequency) errors.frequency = 'Choose how often to pay.';
    const start = (form.start_date ?? '').trim();
    if (!isCalendarDate(start)) errors.start_date = 'Enter the date of the first payment.';
    const amount = centsOf(form.plan_amount);
    if (amount === undefined) errors.plan_amount = 'Enter the amount of each payment in dollars and cents.';
    const methods = await savedMethods(visit);
    const way = waysToPay(form, errors, methods.map((method) => ({ id: method.id, label: `your ${methodLabel(method)}` })));
    if (form.policy !== 'accepted') errors.policy = 'Please accept the payment policy to continue.';
    if (Object.keys(errors).length > 0 || !way) return renderPlan(res, visit, view, 422, safe(form), errors);
    const suggestion = suggestedPlan(view, todayUtc(visit.now));
    const suggested = frequency === suggestion.frequency && start === suggestion.start_date && amount === suggestion.amount;
    try {
      await setUpPlan(deps, visit, view, { frequency: frequency!, start_date: start, amount: amount!, way, suggested });
      res.redirect(303, `${base}/accounts/${view.account.id}?plan=created`);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        const messages = error.fieldErrors ? formErrorsOf(error.fieldErrors) : { form: error.message };
        if (messages.amount) messages.plan_amount = messages.amount;
        return renderPlan(res, visit, view, error.status, safe(form), messages);
      }
      throw error;
    }
  }));

  /** The customer's saved methods that can be charged today (a guest has none). */
  async function savedMethods(visit: Visit): Promise<PaymentMethodRow[]> {
    return !isGuest(visit) ? accounts.methods(visit.tenant, customerId(visit), visit.now) : [];
  }

  return router;
}

/** How a saved method is named to its owner: "Visa card ending 4242". */
export function methodLabel(method: PaymentMethodRow): string {
  return method.type === 'card' ? `${method.card_brand ? `${method.card_brand.charAt(0).toUpperCase()}${method.card_brand.slice(1)} card` : 'card'} ending ${method.card_last4}` : `bank account ${method.account_number_masked}`;
}

function notPayable(view: AccountView, base: string): PortalStop {
  return new PortalStop(409, 'conflict', 'Nothing to pay', sentence(view.refusal?.message ?? 'the account takes no payments'), undefined, { href: `${base}/accounts/${view.account.id}`, text: 'Back to the account' });
}

/** The form as it is shown again: never the card number or security code, nor the bank account number. */
function safe(form: Form): Form {
  const { card_number: _n, card_cvc: _c, ach_account: _a, _csrf, ...rest } = form;
  return rest;
}

