/**
 * The moves of an offer that money or time makes, each in the caller's transaction with the
 * account locked: superseded when the balance moves under a pending offer, completed (the
 * rest written off) when the settled sum is paid, broken when its payment fails for good,
 * expired at `expires_at`. Each move says so through the events port.
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { amountDue } from '../payment-terms/payment-terms';
import { lockAccount, moveBalances, spread } from '../payments/balances';
import { chargeRepo } from '../charge-store/charge-repo';
import { offerRepo, setSettlementDiscount, type OfferRow, type OfferValues } from './offer-repo';

/** `debt-account-settlement-offer.update` for the offer, and `debt-account.update` for accounts whose payload changed with it. */
export async function offerChanged(events: EventRecorder, trx: Knex.Transaction, tenant: Tenant, offer: OfferRow, accountIds: string[] = []): Promise<void> {
  await events.record(trx, tenant, [
    { name: 'debt-account-settlement-offer.update', ids: [offer.id] },
    { name: 'debt-account.update', ids: [...new Set([offer.debt_account_id, ...accountIds])] },
  ]);
}

export async function move(events: EventRecorder, trx: Knex.Transaction, tenant: Tenant, offer: OfferRow, values: OfferValues, now: Date, accountIds: string[] = []): Promise<OfferRow> {
  const row = await offerRepo(trx, tenant).update(offer.id, values, now);
  await offerChanged(events, trx, tenant, row, accountIds);
  return row;
}

/** Pending offers of `accountIds` whose account's balance is no longer the one offered on. */
export async function supersedeMoved(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, accountIds: string[], now: Date): Promise<void> {
  await supersedeOffers(trx, events, tenant, await offerRepo(trx, tenant).openOf(accountIds, ['pending']), now);
}

/** Of the pending `offers` (locked), those whose account's balance is no longer the one offered on: superseded. */
export async function supersedeOffers(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offers: OfferRow[], now: Date): Promise<void> {
  for (const offer of offers) {
    const account = await debtAccountRepo(trx, tenant).find(offer.debt_account_id);
    if (account && Number(account.current_balance) !== Number(offer.amount)) await move(events, trx, tenant, offer, { status: 'superseded', ended_at: now }, now);
  }
}

/**
 * Of the accepted `offers` (locked), those whose settled sum is now paid: the rest of the
 * balance is written off (one `settlement_write_off` transaction of the charge `chargeId` per
 * account it lowers, children oldest first as a charge spreads), and the account is paid off.
 */
export async function completePaid(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offers: OfferRow[], chargeId: string, now: Date): Promise<void> {
  for (const offer of offers) {
    const family = await lockAccount(trx, tenant, offer.debt_account_id);
    if (!family || amountDue(family.account) > 0) continue;
    const rest = Number(family.account.current_balance);
    await setSettlementDiscount(trx, tenant, family.account.id, null);
    let moved: string[] = [];
    if (rest > 0) {
      const parts = spread(family, rest);
      await chargeRepo(trx, tenant).insertTransactions(
        chargeId,
        parts.map((part) => ({ ...part, kind: 'settlement_write_off', status: 'succeeded', gateway_reference: null })),
      );
      moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: -part.amount })));
    }
    const values: OfferValues = { status: 'completed', completed_at: now, charge_id: offer.charge_id ?? (offer.payment_plan_id ? null : chargeId), write_off_charge_id: chargeId };
    await move(events, trx, tenant, offer, values, now, moved);
  }
}

/** The accepted offer's payment failed for good: nothing is written off, the rest is owed again. */
export async function breakOffer(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offer: OfferRow, now: Date): Promise<void> {
  await setSettlementDiscount(trx, tenant, offer.debt_account_id, null);
  await move(events, trx, tenant, offer, { status: 'broken', ended_at: now }, now);
}

/**
 * The accepted offer has nothing set up any more, and not by the debtor's failure to pay (its
 * charge at acceptance declined or never received, its scheduled charge canceled): `pending`
 * again, as before acceptance, or `expired` when its `expires_at` passed meanwhile. The whole
 * balance is owed again.
 */
export async function reopenOffer(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offer: OfferRow, now: Date): Promise<void> {
  await setSettlementDiscount(trx, tenant, offer.debt_account_id, null);
  const lapsed = offer.expires_at !== null && offer.expires_at.getTime() <= now.getTime();
  const open: OfferValues = { accepted_option: null, accepted_at: null, payment_method_id: null, charge_id: null };
  await move(events, trx, tenant, offer, lapsed ? { ...open, status: 'expired', ended_at: now } : { ...open, status: 'pending' }, now);
}

/** A pending offer whose `expires_at` passed. */
export async function expireOffer(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offer: OfferRow, now: Date): Promise<void> {
  await move(events, trx, tenant, offer, { status: 'expired', ended_at: now }, now);
}

export async function revokeOffer(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, offer: OfferRow, now: Date): Promise<OfferRow> {
  return move(events, trx, tenant, offer, { status: 'revoked', ended_at: now }, now);
}
