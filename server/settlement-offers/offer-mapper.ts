/** The one place an offer row becomes the API's SettlementOffer. */
import type { components } from '../../generated/schema';
import type { OfferRow } from './offer-repo';

type SettlementOffer = components['schemas']['SettlementOffer'];

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

export function offerToApi(row: OfferRow): SettlementOffer {
  return {
    id: row.id,
    debt_account_id: row.debt_account_id,
    name: row.name,
    status: row.status,
    amount: Number(row.amount),
    discount: Number(row.discount),
    discount_percentage: Number(row.discount_percentage),
    discounted_amount: Number(row.discounted_amount),
    // Settlements carry no interest or fees: the debtor pays the settled sum, no more.
    total_amount: Number(row.discounted_amount),
    months_period: row.months_period,
    allowed: row.allowed,
    expires_at: iso(row.expires_at),
    accepted_option: row.accepted_option,
    accepted_at: iso(row.accepted_at),
    completed_at: iso(row.completed_at),
    ended_at: iso(row.ended_at),
    charge_id: row.charge_id,
    payment_plan_id: row.payment_plan_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
