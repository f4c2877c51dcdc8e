/**
 * A payment intent (a one-time payment, now or on a later day, or a plan's terms) turned into
 * field errors against an account's terms (payment-terms.ts): the one place these messages are
 * written. Field paths are the API's (`amount`, `scheduled_at`, `card`, …); the Portal's form
 * shows each beside its own field.
 */
import type { components } from '../../generated/schema';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { addDays } from '../kernel/dates';
import { instalmentCount, money, offersOneTime, WINDOWS, type AccountTerms, type Channel, type TermsAccount } from './payment-terms';

type Frequency = components['schemas']['PaymentPlanFrequency'];

/** The ways to pay an intent names; exactly one must be given. */
export interface WayToPay {
  payment_method_id?: string;
  card?: unknown;
  ach?: unknown;
  save_payment_method?: boolean;
}

export interface PaymentIntent extends WayToPay {
  amount: number;
  scheduled_at?: string;
  /** An instalment of a plan: its amount was checked against the terms when the plan was set up. */
  instalment?: boolean;
  /** A guest of the Portal (no customer session): pays once, today, with a new card or bank account. */
  guest?: boolean;
}

/** Who asks, and today's date on the tenant's clock. */
export interface AskedAt {
  channel: Channel;
  today: string;
}

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

export function throwIfAny(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
}

/** Exactly one of a saved method, a card or a bank account; saving applies to a new one only. */
export function wayErrors(way: WayToPay, errors: FieldErrors = {}): FieldErrors {
  const given = (['payment_method_id', 'card', 'ach'] as const).filter((field) => way[field] !== undefined);
  if (given.length === 0) add(errors, 'payment_method_id', 'one of payment_method_id, card or ach is required');
  for (const field of given.slice(1)) add(errors, field, `cannot be given with ${given[0]}: exactly one way to pay`);
  if (way.save_payment_method && given.length === 1 && way.payment_method_id) add(errors, 'save_payment_method', 'applies only to a new card or bank account');
  return errors;
}

/** The later day of a payment to schedule; undefined to pay at once (omitted or today). Call after `paymentErrors`. */
export function laterDayOf(intent: Pick<PaymentIntent, 'scheduled_at'>, today: string): string | undefined {
  return intent.scheduled_at !== undefined && intent.scheduled_at > today ? intent.scheduled_at : undefined;
}

/** What a payment intent breaks before any account is read: the way to pay, who pays, the day. */
export function intentErrors(intent: PaymentIntent, { channel, today }: AskedAt): FieldErrors {
  const errors = wayErrors(intent);
  if (intent.guest) {
    if (intent.payment_method_id !== undefined) add(errors, 'payment_method_id', 'a guest pays with a new card or bank account');
    if (intent.scheduled_at !== undefined && intent.scheduled_at !== today) add(errors, 'scheduled_at', 'a guest pays today');
    if (intent.save_payment_method) add(errors, 'save_payment_method', 'a guest cannot save a card or bank account');
    return errors;
  }
  const day = intent.scheduled_at;
  if (day === undefined || day === today) return errors;
  const last = addDays(today, WINDOWS[channel].laterDayWithinDays);
  if (day < today) add(errors, 'scheduled_at', `must be today (${today}) or later`);
  else if (day > last) add(errors, 'scheduled_at', `must be within ${WINDOWS[channel].laterDayWithinDays} days from today (at the latest ${last})`);
  else if (!intent.payment_method_id && !intent.save_payment_method) {
    add(errors, 'scheduled_at', 'a scheduled charge needs a saved payment method: give payment_method_id, or save_payment_method with the card or ach');
  }
  return errors;
}

/**
 * A payment the dispute hold refuses (tag Disputes): the account is held, or a parent is asked
 * for more than its balance less its held children's. The API answers 409 `account_disputed`.
 */
export function throwIfDisputed(terms: AccountTerms, amount: number): void {
  const beyondShare = terms.maximum < terms.balance && amount > terms.maximum;
  if (terms.refusal?.reason === 'disputed' || (!terms.refusal && beyondShare)) {
    throw new ApiError(
      'account_disputed',
      terms.refusal
        ? 'The account is held by an open dispute and takes no payment until the dispute is answered.'
        : `Part of the account is held by an open dispute: at most ${money(terms.maximum)} can be paid now.`,
    );
  }
}

/** What a payment of `intent.amount` breaks on an account with `terms` (read under its lock). */
export function amountErrors(terms: AccountTerms, intent: Pick<PaymentIntent, 'amount' | 'instalment'>, errors: FieldErrors = {}): FieldErrors {
  if (terms.refusal) {
    add(errors, 'debt_account_id', terms.refusal.message);
    return errors;
  }
  const { amount } = intent;
  if (amount > terms.maximum) add(errors, 'amount', `must be at most the current balance (${money(terms.maximum)})`);
  else if (intent.instalment) return errors;
  else if (!offersOneTime(terms, amount)) {
    if (terms.options.includes('full-amount-payment')) add(errors, 'amount', `must be the whole balance (${money(terms.balance)}): this account takes no partial payment`);
    else add(errors, 'debt_account_id', 'the account takes no one-time payment: its billing_type offers only a payment plan');
  } else if (amount < terms.minimum) {
    add(errors, 'amount', `must be at least the minimum payment (${money(terms.minimum)}) unless it pays the whole balance (${money(terms.balance)})`);
  }
  return errors;
}

/** Every error of a payment intent on an account with `terms`: what a page shows all at once. */
export function paymentErrors(terms: AccountTerms, intent: PaymentIntent, at: AskedAt): FieldErrors {
  return amountErrors(terms, intent, intentErrors(intent, at));
}

/** Why an account cannot have a plan, if it cannot (the message of `debt_account_id`). */
export function planRefusal(account: TermsAccount | undefined, terms: AccountTerms | undefined): string | undefined {
  if (!account || !terms) return 'the account does not exist';
  if (account.parent_id) return 'the account is a child account: a plan pays its parent';
  if (terms.refusal) return terms.refusal.message;
  if (!terms.options.includes('payment-plan')) return 'the account does not offer payment-plan in its billing_type';
  return undefined;
}

export interface PlanIntent {
  start_date?: string;
  amount?: number;
  frequency?: Frequency | null;
}

/** A plan's start within the channel's window. */
export function planStartErrors(startDate: string, { channel, today }: AskedAt, errors: FieldErrors = {}): FieldErrors {
  const within = WINDOWS[channel].planStartWithinDays;
  if (startDate < today) add(errors, 'start_date', 'must be today or later');
  else if (startDate > addDays(today, within)) add(errors, 'start_date', `must be within ${within} days from today`);
  return errors;
}

/** A plan's instalment amount: the minimum unless it pays all, at most the balance, and the balance paid within the channel's bound. */
export function planAmountErrors(terms: AccountTerms, amount: number, frequency: Frequency | null | undefined, { channel }: AskedAt, errors: FieldErrors = {}): FieldErrors {
  const windows = WINDOWS[channel];
  const most = frequency ? windows.planPayments[frequency] : Math.min(...Object.values(windows.planPayments));
  if (amount > terms.balance) add(errors, 'amount', `must be at most the current balance (${money(terms.balance)})`);
  else if (amount < terms.minimum) add(errors, 'amount', `must be at least the minimum payment (${money(terms.minimum)}) unless it pays the whole balance`);
  else if (instalmentCount(terms.balance, amount) > most) {
    add(errors, 'amount', `must pay the balance (${money(terms.balance)}) ${windows.planBound}: at least ${money(Math.ceil(terms.balance / most))} for this frequency`);
  }
  return errors;
}

/** Every error of a plan's terms on an account (a new plan, or one being enrolled). */
export function planErrors(account: TermsAccount | undefined, terms: AccountTerms | undefined, plan: PlanIntent, at: AskedAt, refusalField = 'debt_account_id'): FieldErrors {
  const errors: FieldErrors = {};
  const refusal = planRefusal(account, terms);
  if (refusal) add(errors, refusalField, refusalField === 'debt_account_id' ? refusal : `cannot enroll the plan: ${refusal}`);
  if (plan.start_date !== undefined) planStartErrors(plan.start_date, at, errors);
  if (!refusal && plan.amount !== undefined) planAmountErrors(terms!, plan.amount, plan.frequency, at, errors);
  return errors;
}
