/**
 * A settlement offer's own fields as payloads show them (spec 6.4's accepted-offer fields,
 * without the charges, scheduled charge and plan that pay it): the part a charge's or a
 * transaction's `debt_account_settlement_offer` shows, and the base of the offer's own
 * payload (settlement-payloads.ts). Imports no payload builder, so payment-payloads.ts may use it.
 */
import type { components } from '../../generated/schema';
import type { OfferRow } from './settlement-reads';
import { eventTime } from './event-time';

type S = components['schemas'];

/** What the debtor was offered: the spec names `settlement_offer` without its fields; these are ours. */
export function offered(row: OfferRow): Record<string, unknown> {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    amount: Number(row.amount),
    discount_percentage: Number(row.discount_percentage),
    discounted_amount: Number(row.discounted_amount),
    months_period: row.months_period,
    allowed: row.allowed,
    expires_at: row.expires_at ? eventTime(row.expires_at) : null,
  };
}

/** The offer with empty `charges` and null `scheduled_charge` and `payment_plan` (the caller fills them, or is one of them). */
export function offerFields(row: OfferRow): S['EventSettlementOffer'] {
  return {
    id: row.id,
    settlement_offer: offered(row),
    charges: [],
    scheduled_charge: null,
    payment_plan: null,
    has_payment_plan: row.payment_plan_id !== null,
    name: row.name,
    discount_percentage: Number(row.discount_percentage),
    discount: Number(row.discount),
    months_period: row.months_period > 0 ? row.months_period : null,
    amount: Number(row.amount),
    discounted_amount: Number(row.discounted_amount),
    // Settlements carry no interest or fees.
    total_amount: Number(row.discounted_amount),
    status: row.status,
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}
