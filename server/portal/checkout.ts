/**
 * Checkout as a story: a one-time payment through the payments service (the same rules as
 * POST /charges: at least the minimum unless it pays everything, never above the balance, a
 * declined card stored as a failed charge and nothing moved), or a payment plan through the
 * payment-plans service, within the Portal's bounds. Each outcome is reported as a tracking
 * event once the money's own transaction has committed.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { ApiError } from '../http/errors';
import type { EventName } from '../events/events';
import { chargeService } from '../payments/payment-service';
import type { ChargeRow } from '../payments/charge-repo';
import { paymentMethodService } from '../payment-methods/payment-method-service';
import { planService } from '../payment-plans/plan-service';
import { planRepo } from '../payment-plans/plan-repo';
import { addDays, instalmentCount, type Frequency } from '../payment-plans/schedule';
import { todayUtc } from '../dates';
import type { Visit } from './browser-sessions';
import type { AccountView } from './portal-accounts';
import type { WayToPay } from './payment-form';
import { track, type Activity } from './tracking';
import { paymentScope, type PaymentKey } from './payment-key';

type S = components['schemas'];

/** The Portal's plan bounds: a plan starts within 30 days and ends within 24 months. */
export const PLAN_START_WITHIN_DAYS = 30;
export const PLAN_MONTHS = 24;
export const MAX_PAYMENTS: Record<Frequency, number> = { weekly: 104, every_other_week: 52, monthly: PLAN_MONTHS, last_of_month: PLAN_MONTHS };
/** The plan we suggest: monthly, from today, over this many months (fewer when a payment would fall below the minimum). */
export const SUGGESTED_MONTHS = 6;

export interface Suggestion {
  frequency: Frequency;
  start_date: string;
  amount: number;
}

export function suggestedPlan(view: AccountView, today: string): Suggestion {
  const byMonths = Math.ceil(view.balance / SUGGESTED_MONTHS / 100) * 100;
  return { frequency: 'monthly', start_date: today, amount: Math.min(view.balance, Math.max(byMonths, view.minimum)) };
}

function activity(visit: Visit, view: AccountView, event: EventName): Activity {
  return { event, deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: view.account.id };
}

export interface PayInput {
  amount: number;
  way: WayToPay;
  save: boolean;
  /** One per checkout form shown: a second submission of the same form answers the first charge. */
  paymentKey?: PaymentKey;
  /** A later day (YYYY-MM-DD) to charge on; the way to pay is then saved, as a scheduled charge needs. */
  scheduledAt?: string;
}

/** How far ahead the Portal lets a customer schedule a one-time payment. */
export const PAY_LATER_WITHIN_DAYS = 30;

export interface Paid {
  charge: ChargeRow;
  /** Set when the gateway declined: nothing was moved. */
  declined?: ApiError;
}

export function paymentEvent(guest: boolean, full: boolean, ok: boolean, scheduled = false): EventName {
  if (scheduled && ok && !guest) return full ? 'customer.checkout.one-time-payment.full-amount.scheduled.success' : 'customer.checkout.one-time-payment.amount.scheduled.success';
  const outcome = ok ? 'success' : 'failed';
  if (guest) return full ? `guest.customer.one-time-payment.full-amount.${outcome}` : `guest.customer.one-time-payment.${outcome}`;
  return full ? `customer.checkout.one-time-payment.full-amount.${outcome}` : `customer.checkout.one-time-payment.amount.${outcome}`;
}

export async function pay(deps: AppDeps, visit: Visit, view: AccountView, input: PayInput): Promise<Paid> {
  const guest = !visit.session;
  await track(deps.db, deps.events, visit.tenant, [activity(visit, view, 'customer.checkout.policy.accepted')]);
  const later = !guest && input.scheduledAt !== undefined && input.scheduledAt > todayUtc(visit.now);
  if (later && input.scheduledAt! > addDays(todayUtc(visit.now), PAY_LATER_WITHIN_DAYS)) {
    throw ApiError.field('scheduled_at', `must be within ${PAY_LATER_WITHIN_DAYS} days from today`);
  }
  const body: S['ChargeCreate'] = {
    debt_account_id: view.account.id,
    amount: input.amount,
    ...input.way,
    ...('payment_method_id' in input.way ? {} : { save_payment_method: later || (input.save && !guest) }),
    ...(later ? { scheduled_at: input.scheduledAt } : {}),
  };
  const outcome = await chargeService(deps).create(visit.tenant, body, input.paymentKey && paymentScope(deps.secrets, visit, input.paymentKey, body));
  const full = input.amount === view.balance;
  await track(deps.db, deps.events, visit.tenant, [activity(visit, view, paymentEvent(guest, full, !outcome.declined, later))]);
  return outcome;
}

export interface PlanInput {
  frequency: Frequency;
  start_date: string;
  amount: number;
  way: WayToPay;
  /** The terms are the ones we suggested, unchanged. */
  suggested: boolean;
}

function checkBounds(input: PlanInput, view: AccountView, today: string): void {
  const errors: Record<string, string[]> = {};
  if (input.start_date < today) errors.start_date = ['must be today or later'];
  else if (input.start_date > addDays(today, PLAN_START_WITHIN_DAYS)) errors.start_date = [`must be within ${PLAN_START_WITHIN_DAYS} days from today`];
  const payments = instalmentCount(view.balance, input.amount);
  if (payments > MAX_PAYMENTS[input.frequency]) {
    const least = Math.ceil(view.balance / MAX_PAYMENTS[input.frequency]);
    errors.amount = [`must pay the balance within ${PLAN_MONTHS} months: at least $${(least / 100).toFixed(2)} for this frequency`];
  }
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
}

/** A new plan, or the open one the organization left for the customer to configure. */
export async function setUpPlan(deps: AppDeps, visit: Visit, view: AccountView, input: PlanInput): Promise<S['PaymentPlanDetail']> {
  const fail = () => track(deps.db, deps.events, visit.tenant, [activity(visit, view, 'customer.checkout.payment-plan.failed')]);
  try {
    const open = await planRepo(deps.db, visit.tenant).openOf(view.account.id);
    if (open?.status === 'active') throw ApiError.conflict('This account already has a payment plan.');
    checkBounds(input, view, todayUtc(visit.now));
    await track(deps.db, deps.events, visit.tenant, [activity(visit, view, 'customer.checkout.policy.accepted')]);
    const methodId =
      'payment_method_id' in input.way ? input.way.payment_method_id : (await paymentMethodService(deps).create(visit.tenant, visit.browser.customer_id!, input.way)).id;
    const terms = { frequency: input.frequency, start_date: input.start_date, amount: input.amount, payment_method_id: methodId };
    const plan = open ? await planService(deps).update(visit.tenant, open.id, terms) : await planService(deps).create(visit.tenant, { debt_account_id: view.account.id, ...terms });
    const events: EventName[] = [
      'customer.checkout.payment-plan.success',
      input.suggested ? 'customer.checkout.payment-plan.suggested.success' : 'customer.checkout.payment-plan.custom.success',
      ...(open ? (['customer.payment-plan.updated'] as const) : []),
    ];
    await track(deps.db, deps.events, visit.tenant, events.map((event) => activity(visit, view, event)));
    return plan;
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) await fail();
    throw error;
  }
}
