/**
 * Checkout as a story: a one-time payment through the payments service, or a payment plan
 * through the payment-plans service, each under the account's terms with the Portal's windows
 * (payment-terms.ts: the same rules as POST /charges and POST /payment-plans; a declined card
 * is stored as a failed charge and moves nothing). Each outcome's tracking events are recorded
 * in the money's own transaction: they commit, or roll back, with it.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import type { EventName } from '../events/events';
import { chargeService } from '../payments/charge-service';
import type { ChargeRow } from '../charge-store/charge-repo';
import { paymentMethodService } from '../payment-methods/payment-method-service';
import { planService } from '../payment-plans/plan-service';
import { planRepo } from '../payment-plans/plan-repo';
import type { Frequency } from '../payment-plans/schedule';
import { todayUtc } from '../kernel/dates';
import { planErrors, throwIfAny, wayErrors, type WayToPay } from '../payment-terms/payment-intent';
import { isGuest, type Visit } from './browser-sessions';
import type { AccountView } from './portal-accounts';
import { track, type Activity } from './tracking';
import { paymentScope, type PaymentKey } from './payment-key';
import { requireCheckoutSignatures, tellCheckoutSignatures } from './checkout-documents';
import { paymentEvent, rememberCheckout } from './checkout-charges';

type S = components['schemas'];
type PaymentMethodCreate = S['PaymentMethodCreate'];

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
  /** Every way to pay the request named: more than one is refused by the terms. */
  way: WayToPay;
  save: boolean;
  /** One per checkout form shown: a second submission of the same form answers the first charge. */
  paymentKey?: PaymentKey;
  /** A later day (YYYY-MM-DD) to charge on; the way to pay is then saved, as a scheduled charge needs. */
  scheduledAt?: string;
}

export interface Paid {
  charge: ChargeRow;
  /** Set when the gateway declined: nothing was moved. */
  declined?: ApiError;
}

/**
 * Whether the payment saves its new card or bank account: when the customer asks, and always
 * for a new one on a later day (a scheduled charge charges a saved method; the form says so).
 * The form's checks and the payment ask this one rule.
 */
export function savesMethod(visit: Visit, input: Pick<PayInput, 'save' | 'way' | 'scheduledAt'>): boolean {
  const later = input.scheduledAt !== undefined && input.scheduledAt > todayUtc(visit.now);
  return input.save || (later && input.way.payment_method_id === undefined && !isGuest(visit));
}

export async function pay(deps: AppDeps, visit: Visit, view: AccountView, input: PayInput): Promise<Paid> {
  const guest = isGuest(visit);
  const later = input.scheduledAt !== undefined && input.scheduledAt > todayUtc(visit.now);
  const body: S['ChargeCreate'] = {
    debt_account_id: view.account.id,
    amount: input.amount,
    ...(input.way as Pick<S['ChargeCreate'], 'payment_method_id' | 'card' | 'ach'>),
    ...(savesMethod(visit, input) ? { save_payment_method: true } : {}),
    ...(input.scheduledAt !== undefined ? { scheduled_at: input.scheduledAt } : {}),
  };
  const full = input.amount === view.balance;
  await requireCheckoutSignatures(deps, visit, view);
  const checkout = { deviceId: visit.deviceId, customerId: visit.browser.customer_id ?? null, debtAccountId: view.account.id, guest, full, occurredAt: visit.now };
  return chargeService(deps).create(visit.tenant, body, input.paymentKey && paymentScope(deps.secrets, visit, input.paymentKey, body), {
    channel: 'portal',
    guest,
    // A charge made now: its events come with its answer, whoever records it (checkout-charges.ts).
    // (The hook also runs for a charge stored `scheduled`, whose events come with `within` below.)
    reserved: async (trx, charge) => {
      if (charge.status !== 'scheduled') await rememberCheckout(trx, visit.tenant, charge, checkout);
    },
    // A charge for a later day: its events come with its scheduling.
    within: async (trx, outcome) => {
      if (outcome.charge.status !== 'scheduled') return;
      await track(trx, deps.events, visit.tenant, [activity(visit, view, 'customer.checkout.policy.accepted'), activity(visit, view, paymentEvent(guest, full, true, later))]);
      await tellCheckoutSignatures(trx, deps, visit, view);
    },
  });
}

export interface PlanInput {
  frequency: Frequency;
  start_date: string;
  amount: number;
  way: WayToPay;
  /** The terms are the ones we suggested, unchanged. */
  suggested: boolean;
}

/** A new plan, or the open one the organization left for the customer to configure. */
export async function setUpPlan(deps: AppDeps, visit: Visit, view: AccountView, input: PlanInput): Promise<S['PaymentPlanDetail']> {
  const fail = () => track(deps.db, deps.events, visit.tenant, [activity(visit, view, 'customer.checkout.payment-plan.failed')]);
  // Not a failed plan: nothing was tried until the checkout's documents are signed.
  await requireCheckoutSignatures(deps, visit, view);
  try {
    const open = await planRepo(deps.db, visit.tenant).openOf(view.account.id);
    if (open?.status === 'active') throw ApiError.conflict('This account already has a payment plan.');
    // Checked before a new card is saved for it; checked again, under the account's lock, by the plan.
    const at = { channel: 'portal', today: todayUtc(visit.now) } as const;
    throwIfAny({ ...wayErrors(input.way), ...planErrors(view.account, view, input, at) });
    const way = input.way as PaymentMethodCreate;
    const methodId = way.card || way.ach ? (await paymentMethodService(deps).create(visit.tenant, visit.browser.customer_id!, way)).id : input.way.payment_method_id!;
    const terms = { frequency: input.frequency, start_date: input.start_date, amount: input.amount, payment_method_id: methodId };
    const events: EventName[] = [
      'customer.checkout.policy.accepted',
      'customer.checkout.payment-plan.success',
      input.suggested ? 'customer.checkout.payment-plan.suggested.success' : 'customer.checkout.payment-plan.custom.success',
      ...(open ? (['customer.payment-plan.updated'] as const) : []),
    ];
    const context = {
      channel: 'portal',
      within: async (trx: Knex.Transaction) => {
        await track(trx, deps.events, visit.tenant, events.map((event) => activity(visit, view, event)));
        await tellCheckoutSignatures(trx, deps, visit, view);
      },
    } as const;
    return open
      ? await planService(deps).update(visit.tenant, open.id, terms, context)
      : await planService(deps).create(visit.tenant, { debt_account_id: view.account.id, ...terms }, context);
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) await fail();
    throw error;
  }
}
