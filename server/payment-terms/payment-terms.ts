/**
 * What an account may be paid, decided here once: the API (`POST /charges`, scheduled charges,
 * payment plans and their instalments), the scheduler and the Portal (pages and API) all ask
 * these functions, on the account row they locked, at the tenant's time. The rules:
 *
 * - What it owes (`amountDue`): its current balance, less what an accepted settlement offer
 *   forgives: the settled sum minus what was paid since. Every bound below reads it.
 * - Whether it can be paid at all: the first refusal of `PAYABILITY_RULES` (not active, paid
 *   off). A new reason (an account on hold while in dispute, a settled one) is one more rule.
 * - Which options it offers: its `billing_type` (spec 2.1; all three when not set), in the API
 *   as in the Portal. A one-time payment below the whole balance needs `partial-payment`; the
 *   whole balance needs `full-amount-payment` or `partial-payment`; a plan needs `payment-plan`.
 * - The minimum: `rules.min_payment_amount`, else $1.00 (spec 8: the rule is at least 100 cents,
 *   so no account asks less), never above the balance: the whole balance is always a valid
 *   amount. The maximum: the current balance.
 * - The windows of time (`WINDOWS`): how far ahead a later-day charge and a plan's start may be,
 *   and how many instalments a plan may have, for an organization (the API) and for a debtor
 *   paying by themselves (the Portal).
 *
 * Intents (a payment, a plan) become field errors in payment-intent.ts.
 */
import type { components } from '../../generated/schema';
import { BILLING_TYPES } from '../kernel/billing-types';

export type BillingOption = components['schemas']['BillingType'];
type Frequency = components['schemas']['PaymentPlanFrequency'];

/** What the terms read of an account: a debt account row fits. */
export interface TermsAccount {
  status: string;
  /** bigint from pg (a string) or a number. */
  current_balance: string | number;
  billing_type: BillingOption[] | null;
  rules: { min_payment_amount?: number } | null;
  parent_id?: string | null;
  /** bigint: the cents an accepted settlement offer forgives while it is being paid; null or absent without one. */
  settlement_discount?: string | number | null;
  /**
   * Held by an open dispute (tag Disputes): the account itself or its parent is disputed. Read
   * by the callers that load the account (disputes/dispute-hold-fact.ts); absent: not held.
   */
  in_dispute?: boolean;
  /** On a parent: the part of its balance that disputed children hold (their current balances). */
  disputed_share?: number;
  /** Cents held by charges being made (`processing`): counted against what can still be paid. Unset: none. */
  reserved_amount?: number;
}

/** Why an account takes no payment; `reason` is what callers branch on, `message` what people read. */
export interface Refusal {
  reason: 'not_active' | 'paid_off' | 'disputed' | 'reserved';
  message: string;
}

type PayabilityRule = (account: TermsAccount, balance: number) => Refusal | undefined;

/** In order: the first that refuses is the answer. */
const PAYABILITY_RULES: PayabilityRule[] = [
  (account) =>
    account.status === 'paid_off' ? { reason: 'paid_off', message: 'the account is paid off and takes no more payments' } : undefined,
  (account) =>
    account.status !== 'active' ? { reason: 'not_active', message: `the account is ${account.status.replace('_', ' ')} and takes no payments` } : undefined,
  (account, balance) =>
    balance <= 0 && (account.reserved_amount ?? 0) > 0
      ? { reason: 'reserved', message: 'payments being made already take the whole balance; try again once they are done' }
      : undefined,
  (_account, balance) => (balance <= 0 ? { reason: 'paid_off', message: 'the account is paid off and takes no more payments' } : undefined),
  (account, balance) =>
    account.in_dispute || (account.disputed_share ?? 0) >= balance
      ? { reason: 'disputed', message: 'the account is held by an open dispute and takes no payment until the dispute is answered' }
      : undefined,
];

/** Without `rules.min_payment_amount`, the least one payment may be (spec 8's floor of the rule). */
export const DEFAULT_MIN_PAYMENT = 100;

export interface AccountTerms {
  balance: number;
  /** Why it takes no payment; undefined when it takes one. */
  refusal: Refusal | undefined;
  payable: boolean;
  /** What `billing_type` offers (all when unset); none when the account takes no payment. */
  options: BillingOption[];
  /** The least amount of one payment or instalment, at most the balance. */
  minimum: number;
  /** The most: the current balance. */
  maximum: number;
}

/**
 * What the account may still be paid: its current balance, or, under an accepted settlement
 * offer, the settled sum minus what was paid since (the balance less the discount forgiven).
 */
export function amountDue(account: TermsAccount): number {
  return Number(account.current_balance) - Number(account.settlement_discount ?? 0);
}

export function termsOf(account: TermsAccount): AccountTerms {
  // What can still be paid: what it owes less what charges being made hold.
  const balance = amountDue(account) - (account.reserved_amount ?? 0);
  const refusal = PAYABILITY_RULES.map((rule) => rule(account, balance)).find(Boolean);
  return {
    balance,
    refusal,
    payable: !refusal,
    options: refusal ? [] : offeredOptions(account.billing_type),
    minimum: Math.min(balance, account.rules?.min_payment_amount ?? DEFAULT_MIN_PAYMENT),
    // A parent with disputed children takes no more than the rest of its balance.
    maximum: Math.max(balance - (account.disputed_share ?? 0), 0),
  };
}

/** The options a `billing_type` offers: all three when it is not set. */
export function offeredOptions(billingType: BillingOption[] | null | undefined): BillingOption[] {
  return BILLING_TYPES.filter((option) => !billingType || billingType.includes(option));
}

/** Whether a one-time payment of `amount` is one of the options: the whole balance, or part of it. */
export function offersOneTime(terms: AccountTerms, amount: number): boolean {
  const partial = terms.options.includes('partial-payment');
  return amount >= terms.balance ? partial || terms.options.includes('full-amount-payment') : partial;
}

/** Who asks: an organization through the API, or a debtor paying by themselves in the Portal. */
export type Channel = 'api' | 'portal';

export interface Windows {
  /** A charge may be scheduled up to this many days after today. */
  laterDayWithinDays: number;
  /** A plan's first payment may be up to this many days after today. */
  planStartWithinDays: number;
  /** The most payments of a plan, by frequency. */
  planPayments: Record<Frequency, number>;
  /** Said with the instalment bound: "within 24 months" or "in at most 120 instalments". */
  planBound: string;
}

/** The most instalments any plan may have (the document's bound). */
export const MAX_INSTALMENTS = 120;
/** The Portal's plans end within this many months. */
export const PORTAL_PLAN_MONTHS = 24;

export const WINDOWS: Record<Channel, Windows> = {
  api: {
    laterDayWithinDays: 365,
    planStartWithinDays: 365,
    planPayments: { weekly: MAX_INSTALMENTS, every_other_week: MAX_INSTALMENTS, monthly: MAX_INSTALMENTS, last_of_month: MAX_INSTALMENTS },
    planBound: `in at most ${MAX_INSTALMENTS} instalments`,
  },
  portal: {
    laterDayWithinDays: 30,
    planStartWithinDays: 30,
    planPayments: { weekly: 104, every_other_week: 52, monthly: PORTAL_PLAN_MONTHS, last_of_month: PORTAL_PLAN_MONTHS },
    planBound: `within ${PORTAL_PLAN_MONTHS} months`,
  },
};

/** How many instalments of `amount` cover `total`: the last one is the remainder. */
export function instalmentCount(total: number, amount: number): number {
  if (total <= 0) return 0;
  return Math.ceil(total / amount);
}

/** Cents as people read them: $1,234.50. */
export function money(cents: number): string {
  return `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}
