/**
 * The terms of a settlement offer as pure functions: what an offer on a balance comes to (the
 * discount, the settled sum, the percentage) within the organization's two maximums, and how
 * a plan paying it fits in its `months_period`. Amounts are integer cents; percentages are
 * compared in hundredths of a percent, as integers, so no float decides an edge.
 */
import type { components } from '../../generated/schema';
import type { FieldErrors } from '../kernel/errors';
import { money, MAX_INSTALMENTS, instalmentCount } from '../payment-terms/payment-terms';
import { chargeDate, type Frequency } from '../payment-plans/schedule';
import type { NewOffer, OfferOption } from './offer-repo';

type OfferCreate = components['schemas']['SettlementOfferCreate'];

export interface OfferLimits {
  /** `settlement_max_discount_percentage`. */
  maxDiscountPercentage: number;
  /** `settlement_max_months`. */
  maxMonths: number;
}

export const DEFAULT_OFFER_NAME = 'Settlement offer';
/** How far ahead an offer may lapse. */
export const MAX_EXPIRY_DAYS = 365;

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

/** A percentage in hundredths (40.25 → 4025); undefined when it has more than two decimals. */
function hundredths(percentage: number): number | undefined {
  const scaled = Math.round(percentage * 100);
  return Math.abs(scaled - percentage * 100) < 1e-6 ? scaled : undefined;
}

/** What an offer on `balance` comes to, or the field errors of the request. */
export function offerOf(balance: number, body: OfferCreate, limits: OfferLimits, now: Date): { offer: Omit<NewOffer, 'debt_account_id'> } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const maxHundredths = Math.round(limits.maxDiscountPercentage * 100);
  const given = [body.discount_percentage, body.discounted_amount].filter((value) => value !== undefined).length;
  let discount = 0;
  if (given !== 1) add(errors, 'discount_percentage', 'give exactly one of discount_percentage and discounted_amount');
  else if (body.discount_percentage !== undefined) {
    const asked = hundredths(body.discount_percentage);
    if (asked === undefined) add(errors, 'discount_percentage', 'must have at most two decimals');
    else if (asked > maxHundredths) add(errors, 'discount_percentage', `must be at most the organization's maximum discount (${limits.maxDiscountPercentage}%)`);
    else {
      // Rounded down: the discount never exceeds the percentage given.
      discount = Math.floor((balance * asked) / 10000);
      if (discount < 1) add(errors, 'discount_percentage', `forgives less than 1 cent of the balance (${money(balance)})`);
      else if (discount >= balance) add(errors, 'discount_percentage', 'must leave at least 1 cent to pay');
    }
  } else {
    const settled = body.discounted_amount!;
    if (settled >= balance) add(errors, 'discounted_amount', `must be less than the current balance (${money(balance)})`);
    else if ((balance - settled) * 10000 > maxHundredths * balance) {
      add(errors, 'discounted_amount', `forgives more than the organization's maximum discount (${limits.maxDiscountPercentage}%): at least ${money(balance - Math.floor((balance * maxHundredths) / 10000))}`);
    } else discount = balance - settled;
  }
  if (body.months_period > limits.maxMonths) add(errors, 'months_period', `must be at most the organization's maximum (${limits.maxMonths} months)`);
  if (body.expires_at !== undefined) {
    const expires = new Date(body.expires_at);
    if (expires.getTime() <= now.getTime()) add(errors, 'expires_at', 'must be in the future');
    else if (expires.getTime() > now.getTime() + MAX_EXPIRY_DAYS * 86_400_000) add(errors, 'expires_at', `must be at most ${MAX_EXPIRY_DAYS} days ahead`);
  }
  const allowed: OfferOption[] = body.allowed ?? (body.months_period > 0 ? ['full_amount', 'payment_plan'] : ['full_amount']);
  if (allowed.includes('payment_plan') && body.months_period === 0) add(errors, 'allowed', 'payment_plan needs a months_period above 0');
  if (Object.keys(errors).length > 0) return { errors };
  return {
    offer: {
      name: body.name ?? DEFAULT_OFFER_NAME,
      amount: balance,
      discount,
      discount_percentage: Math.round((discount * 10000) / balance) / 100,
      discounted_amount: balance - discount,
      months_period: body.months_period,
      allowed: [...allowed].sort(),
      expires_at: body.expires_at ? new Date(body.expires_at) : null,
    },
  };
}

/**
 * How many instalments of `frequency` from `start` fall before `start` plus `months` months
 * (the plan ends within its months), and never more than any plan may have.
 */
export function instalmentsWithin(frequency: Frequency, start: string, months: number): number {
  const end = chargeDate('monthly', start, months);
  let count = 0;
  while (count < MAX_INSTALMENTS && chargeDate(frequency, start, count) < end) count += 1;
  return count;
}

/** The smallest even instalment that pays `settled` within the plan's instalments, and at least `minimum` (unless it pays all). */
export function defaultInstalment(settled: number, most: number, minimum: number): number {
  return Math.min(settled, Math.max(Math.ceil(settled / Math.max(most, 1)), minimum));
}

/** Why `amount` per instalment cannot pay `settled` within `months` months, if it cannot. */
export function instalmentError(settled: number, amount: number, frequency: Frequency, most: number, months: number): string | undefined {
  if (instalmentCount(settled, amount) <= most) return undefined;
  return `must pay ${money(settled)} within ${months} months: at least ${money(Math.ceil(settled / Math.max(most, 1)))} for ${frequency.replace(/_/g, ' ')}`;
}
