/** The billing options of a debt account, in one order for API answers, webhook payloads and storage. */
import type { components } from '../../generated/schema';

type BillingType = components['schemas']['BillingType'];

/** The Portal's order of the options; an account created without billing_type offers all. */
export const BILLING_TYPES: BillingType[] = ['partial-payment', 'full-amount-payment', 'payment-plan'];

export function sortBillingTypes(values: BillingType[]): BillingType[] {
  return BILLING_TYPES.filter((value) => values.includes(value));
}
