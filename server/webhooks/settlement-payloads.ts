/**
 * Settlement offers as the payloads show them: the offer's own events
 * (`debt-account-settlement-offer.*`, spec 6.4's accepted-offer fields) and the offers a debt
 * account's payload names (`settlement_offer`, `accepted_debt_account_settlement_offer`).
 * Loaded from the offers' table on the recording transaction, like every other payload read.
 */
import type { components } from '../../generated/schema';
import type { PayloadRows } from './payload-reads';
import type { OfferRow } from './settlement-reads';
import { eventTime, planPayload } from './payloads';
import { chargePayload, scheduledChargePayload } from './payment-payloads';

type S = components['schemas'];

/** What the debtor was offered: the spec names `settlement_offer` without its fields; these are ours. */
function offered(row: OfferRow): Record<string, unknown> {
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

export function settlementOfferPayload(row: OfferRow, ctx: PayloadRows): S['EventSettlementOffer'] {
  const charge = row.charge_id ? ctx.payments.charges.get(row.charge_id) : undefined;
  const plan = ctx.plans.get(row.debt_account_id);
  const account = ctx.accounts.get(row.debt_account_id);
  const ofOffer = plan && account && plan.id === row.payment_plan_id;
  return {
    id: row.id,
    settlement_offer: offered(row),
    charges: charge && charge.status !== 'scheduled' && charge.status !== 'canceled' ? [chargePayload(charge, ctx)] : [],
    scheduled_charge: charge && charge.scheduled_at ? scheduledChargePayload(charge, ctx) : null,
    payment_plan: ofOffer ? planPayload(plan, account, ctx, true) : null,
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

/** An account's `settlement_offer` (the pending one) and `accepted_debt_account_settlement_offer` (accepted or completed); the latter without its charges and plan, which the account's payload shows beside. */
export function accountOffers(accountId: string, ctx: PayloadRows): Pick<S['EventDebtAccount'], 'settlement_offer' | 'accepted_debt_account_settlement_offer'> {
  const row = ctx.accountOffers.get(accountId);
  const accepted = row && (row.status === 'accepted' || row.status === 'completed');
  return {
    settlement_offer: row?.status === 'pending' ? offered(row) : null,
    accepted_debt_account_settlement_offer: accepted ? { ...settlementOfferPayload(row, ctx), charges: [], scheduled_charge: null, payment_plan: null } : null,
  };
}
