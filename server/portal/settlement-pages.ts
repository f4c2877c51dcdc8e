/**
 * The Portal's settlement checkout: an account's pending offer, paid in full now or on a later
 * day (within the Portal's 30 days), or over time within the offer's months; a guest who found
 * the account pays it in full today with a new card or bank account. A Portal account's session
 * is no guest (access.ts): it has every way the offer allows, as a link's has. Accepting goes through the
 * offers' own service, as an agent's does; what the customer did is told as tracking events.
 */
import { Router, type Request, type Response } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { addDays, isCalendarDate, todayUtc } from '../kernel/dates';
import type { EventName } from '../events/events';
import { WINDOWS } from '../payment-terms/payment-terms';
import { acceptOffer } from '../settlement-offers/offer-acceptance';
import { pendingOfferOf } from '../settlement-offers/offer-reads';
import type { OfferRow } from '../settlement-offers/offer-repo';
import { visitOf, type PortalScope, type Visit } from './browser-sessions';
import { isGuest, requireAccess, signedIn } from './access';
import { PortalStop } from './page-error';
import { formErrorsOf, waysToPay, type Form, type FormErrors } from './payment-form';
import { portalAccounts, type AccountView } from './portal-accounts';
import { renderPage } from './render';
import { track } from './tracking';
import { FREQUENCIES, methodLabel } from './pages';
import type { Frequency } from '../payment-plans/schedule';

const noOffer = (base: string, accountId: string) =>
  new PortalStop(404, 'not_found', 'No offer to settle', 'This account has no settlement offer open to you now.', undefined, { href: `${base}/accounts/${accountId}`, text: 'Back to the account' });

export function settlementRouter(deps: AppDeps, scope: PortalScope): Router {
  const router = Router();
  const accounts = portalAccounts(deps);
  const base = scope.base;

  async function visitFor(req: Request, res: Response): Promise<Visit | undefined> {
    const visit = await visitOf(deps, scope, req, res);
    requireAccess(visit, 'pay', base, req.originalUrl.split('?')[0]!);
    return visit;
  }

  async function offerFor(req: Request, visit: Visit): Promise<{ view: AccountView; offer: OfferRow }> {
    const view = await accounts.find(visit.tenant, visit.browser.customer_id!, String(req.params.accountId));
    const offer = await pendingOfferOf(deps.db, visit.tenant, view.account.id, visit.now);
    if (!offer) throw noOffer(base, view.account.id);
    return { view, offer };
  }

  async function render(res: Response, visit: Visit, view: AccountView, offer: OfferRow, status: number, form: Form, errors: FormErrors) {
    const guest = isGuest(visit);
    const methods = guest ? [] : await accounts.methods(visit.tenant, visit.browser.customer_id!, visit.now);
    const today = todayUtc(visit.now);
    renderPage(res, status, 'settlement', 'Settle your account', { base, csrf: visit.browser.csrf_token, signedIn: signedIn(visit) }, {
      view,
      offer,
      guest,
      allowed: guest ? ['full_amount'] : offer.allowed,
      frequencies: FREQUENCIES,
      methods,
      methodLabel,
      form,
      errors,
      today,
      latestPayOn: addDays(today, WINDOWS.portal.laterDayWithinDays),
      payLaterDays: WINDOWS.portal.laterDayWithinDays,
    });
  }

  router.get('/accounts/:accountId/settlement', async (req, res) => {
    const visit = await visitFor(req, res);
    if (!visit) return;
    const { view, offer } = await offerFor(req, visit);
    await render(res, visit, view, offer, 200, { option: offer.allowed[0], method: undefined }, {});
  });

  router.post('/accounts/:accountId/settlement', async (req, res) => {
    const visit = await visitFor(req, res);
    if (!visit) return;
    const { view, offer } = await offerFor(req, visit);
    const guest = isGuest(visit);
    const form = req.body as Form;
    const errors: FormErrors = {};
    const option = form.option === 'payment_plan' ? 'payment_plan' : form.option === 'full_amount' ? 'full_amount' : undefined;
    if (!option) errors.option = 'Choose how to pay the settlement.';
    const methods = guest ? [] : await accounts.methods(visit.tenant, visit.browser.customer_id!, visit.now);
    const way = waysToPay(form, errors, methods.map((method) => ({ id: method.id, label: `your ${methodLabel(method)}` })));
    const payOn = (form.pay_on ?? '').trim();
    if (payOn && !isCalendarDate(payOn)) errors.pay_on = 'Enter the date as YYYY-MM-DD.';
    const startDate = (form.start_date ?? '').trim();
    if (option === 'payment_plan' && !isCalendarDate(startDate)) errors.start_date = 'Enter the first payment date as YYYY-MM-DD.';
    if (form.policy !== 'accepted') errors.policy = 'Please accept the payment policy to continue.';
    if (Object.keys(errors).length > 0 || !way || !option) return render(res, visit, view, offer, 422, { ...form, card_number: undefined, ach_account: undefined }, errors);

    const save = !guest && (option === 'payment_plan' || Boolean(payOn && payOn > todayUtc(visit.now)) || form.save_card === 'yes' || form.save_ach === 'yes');
    const body = {
      option,
      ...way,
      save_payment_method: way.payment_method_id ? undefined : save || undefined,
      ...(option === 'full_amount' ? { scheduled_at: payOn || undefined } : { frequency: (form.frequency || 'monthly') as Frequency, start_date: startDate }),
    };
    const tell = (event: EventName) =>
      track(deps.db, deps.events, visit.tenant, [{ event, deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: view.account.id }]);
    const later = option === 'full_amount' && payOn && payOn > todayUtc(visit.now);
    try {
      const accepted = await acceptOffer(deps, visit.tenant, offer.id, body as never, { channel: 'portal', guest });
      if (accepted.declined) {
        await tell(guest ? 'guest.customer.checkout.settlement-offer.full-amount.failed' : 'customer.checkout.settlement-offer.full-amount.failed');
        return render(res, visit, view, offer, 400, { ...form, card_number: undefined, ach_account: undefined }, { form: `Your payment was declined: ${accepted.declined.message} Nothing was charged.` });
      }
      await tell(
        option === 'payment_plan'
          ? 'customer.checkout.settlement-offer.payment-plan.success'
          : later
            ? 'customer.checkout.settlement-offer.full-amount.scheduled.success'
            : guest
              ? 'guest.customer.checkout.settlement-offer.full-amount.success'
              : 'customer.checkout.settlement-offer.full-amount.success',
      );
      res.redirect(303, `${base}/accounts/${view.account.id}?settlement=${accepted.offer.status}`);
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        if (option === 'full_amount') await tell(guest ? 'guest.customer.checkout.settlement-offer.full-amount.failed' : 'customer.checkout.settlement-offer.full-amount.failed');
        const message = error.fieldErrors ? formErrorsOf(error.fieldErrors) : { form: error.message };
        return render(res, visit, view, offer, error.status, { ...form, card_number: undefined, ach_account: undefined }, message);
      }
      throw error;
    }
  });

  return router;
}
