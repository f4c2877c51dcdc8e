/**
 * The itemization a validation notice prints (12 CFR 1006.34(c)(2)(vi)-(viii)): as given on an
 * account (defaults filled in), the rule a schema cannot state (the itemization date is not
 * after today), and the total it comes to.
 */
import type { components } from '../../generated/schema';

export type Itemization = components['schemas']['Itemization'];
type ItemizationUpdate = components['schemas']['ItemizationUpdate'];

/** The stored itemization of a request's (undefined: not given; null: removed), or the message for a 422 on `itemization.itemization_date`. */
export function itemizationOf(input: ItemizationUpdate | null | undefined, today: string): { value: Itemization | null | undefined } | { error: string } {
  if (input === undefined || input === null) return { value: input };
  if (input.itemization_date > today) return { error: `must be today (${today}) or earlier` };
  return {
    value: {
      itemization_date: input.itemization_date,
      kind: input.kind,
      amount: input.amount,
      interest: input.interest ?? 0,
      fees: input.fees ?? 0,
      payments_and_credits: input.payments_and_credits ?? 0,
      creditor: input.creditor ?? 'original_creditor',
    },
  };
}

/** What the itemization says is owed now. */
export const itemizedTotal = (itemization: Itemization): number => itemization.amount + itemization.interest + itemization.fees - itemization.payments_and_credits;
