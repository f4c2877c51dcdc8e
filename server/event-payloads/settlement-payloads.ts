/**
 * Settlement offers as the payloads show them: the offer's own events
 * (`debt-account-settlement-offer.*`, spec 6.4's accepted-offer fields) and the offers a debt
 * account's payload names (`settlement_offer`, `accepted_debt_account_settlement_offer`).
 * Loaded from the offers' table on the recording transaction, like every other payload read.
 */
import type { components } from '../../generated/schema';
import type { PayloadRows } from './payload-reads';
import type { OfferRow } from './settlement-reads';
import { planPayload } from './payloads';
import { offered, offerFields } from './settlement-offer-fields';
import { chargePayload, scheduledChargePayload } from './payment-payloads';

type S = components['schemas'];

/** A charge shown inside the offer it pays: its `debt_account_settlement_offer` (and its transaction's) is null there. */
function inOffer(charge: S['EventCharge']): S['EventCharge'] {
  return { ...charge, debt_account_settlement_offer: null, transaction: charge.transaction && { ...charge.transaction, debt_account_settlement_offer: null } };
}

function scheduledOf(scheduled: S['EventScheduledCharge']): S['EventScheduledCharge'] {
  return { ...scheduled, settlement_offer: null, charge: scheduled.charge && inOffer(scheduled.charge) };
}

export function settlementOfferPayload(row: OfferRow, ctx: PayloadRows): S['EventSettlementOffer'] {
  const charge = row.charge_id ? ctx.payments.charges.get(row.charge_id) : undefined;
  const plan = ctx.plans.get(row.debt_account_id);
  const account = ctx.accounts.get(row.debt_account_id);
  const ofOffer = plan && account && plan.id === row.payment_plan_id;
  return {
    ...offerFields(row),
    charges: charge && charge.status !== 'scheduled' && charge.status !== 'canceled' ? [inOffer(chargePayload(charge, ctx))] : [],
    scheduled_charge: charge && charge.scheduled_at ? scheduledOf(scheduledChargePayload(charge, ctx)) : null,
    payment_plan: ofOffer ? planPayload(plan, account, ctx, true) : null,
  };
}

/** An account's `settlement_offer` (the pending one) and `accepted_debt_account_settlement_offer` (accepted or completed); the latter without its charges and plan, which the account's payload shows beside. */
export function accountOffers(accountId: string, ctx: PayloadRows): Pick<S['EventDebtAccount'], 'settlement_offer' | 'accepted_debt_account_settlement_offer'> {
  const row = ctx.accountOffers.get(accountId);
  const accepted = row && (row.status === 'accepted' || row.status === 'completed');
  return {
    settlement_offer: row?.status === 'pending' ? offered(row) : null,
    accepted_debt_account_settlement_offer: accepted ? offerFields(row) : null,
  };
}
