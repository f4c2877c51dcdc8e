/**
 * What payments, plans and account updates tell settlement offers, through the events port,
 * in the transaction that moved the money: a payment completes an accepted offer once the
 * settled sum is paid; any change of the balance supersedes a pending one; a charge made at
 * acceptance that failed, or a scheduled charge canceled, reopens it; a scheduled charge
 * failed on its day, a returned charge, or its plan's default, breaks it (offer-lifecycle.ts);
 * a return, refund or void after completion reverses the write-off (offer-returns.ts).
 */
import type { Knex } from 'knex';
import { listen, listenAll, type BatchListener, type Listener } from '../events/listeners';
import { tenantKey } from '../payments/family-locks';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { nowFor } from '../kernel/clock';
import { chargeRepo } from '../charge-store/charge-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { offerRepo } from './offer-repo';
import { breakOffer, completePaid, reopenOffer, supersedeMoved, supersedeOffers } from './offer-lifecycle';
import { undoGivenBackCompletion, undoReturnedCompletion } from './offer-returns';

const tenantNow = (tenant: Tenant) => nowFor(() => new Date(), tenant);

/** Money paid on `accountIds`: their accepted offers (read with the pending ones, in one statement) completed when paid, then the pending ones superseded. */
async function paid(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, accountIds: string[], chargeId: string | undefined, now: Date): Promise<void> {
  const open = await offerRepo(trx, tenant).openOf(accountIds, ['accepted', 'pending']);
  if (open.length === 0) return;
  if (chargeId) await completePaid(trx, events, tenant, open.filter((offer) => offer.status === 'accepted'), chargeId, now);
  await supersedeOffers(trx, events, tenant, open.filter((offer) => offer.status === 'pending'), now);
}

/**
 * Payments (a batch of answers recorded together: charges, or instalments): as `paid` for each,
 * in their order, with the open offers of all their accounts read in one statement per tenant.
 * Two of one account in a batch go one after the other instead (the second sees what the first did).
 */
async function paidAll(trx: Knex.Transaction, events: EventRecorder, happened: { tenant: Tenant; what: { accountIds: string[]; chargeId?: string; now: Date } }[]): Promise<void> {
  const byTenant = new Map<string, typeof happened>();
  for (const each of happened) byTenant.set(tenantKey(each.tenant), [...(byTenant.get(tenantKey(each.tenant)) ?? []), each]);
  for (const group of byTenant.values()) {
    const { tenant } = group[0]!;
    const accountIds = group.flatMap(({ what }) => what.accountIds);
    if (new Set(accountIds).size !== accountIds.length) {
      for (const { what } of group) await paid(trx, events, tenant, what.accountIds, what.chargeId, what.now);
      continue;
    }
    const open = await offerRepo(trx, tenant).openOf(accountIds, ['accepted', 'pending']);
    for (const { what } of group) {
      const mine = open.filter((offer) => what.accountIds.includes(offer.debt_account_id));
      if (mine.length === 0) continue;
      if (what.chargeId) await completePaid(trx, events, tenant, mine.filter((offer) => offer.status === 'accepted'), what.chargeId, what.now);
      await supersedeOffers(trx, events, tenant, mine.filter((offer) => offer.status === 'pending'), what.now);
    }
  }
}

const chargesPaid: BatchListener<'charge.paid-accounts'> = paidAll;
const instalmentsPaid: BatchListener<'instalment.paid'> = paidAll;
/** A refund or void: a completed offer it paid has its write-off reversed and is broken (offer-returns.ts); a pending one is superseded. */
const givenBack: Listener<'money.given-back'> = async (trx, events, tenant, { accountIds, chargeId }) => {
  const now = tenantNow(tenant);
  const charge = chargeId ? await chargeRepo(trx, tenant).find(chargeId) : undefined;
  const moved = charge && (await undoGivenBackCompletion(trx, events, tenant, charge, now));
  const account = moved ? await debtAccountRepo(trx, tenant).find(charge.debt_account_id) : undefined;
  const family = account ? [account.id, ...(account.parent_id ? [account.parent_id] : [])] : [];
  await supersedeMoved(trx, events, tenant, [...new Set([...accountIds, ...family])], now);
};
const updated: Listener<'account.updated'> = (trx, events, tenant, { accountIds }) => supersedeMoved(trx, events, tenant, accountIds, tenantNow(tenant));

/** Failures that are ours, not the debtor's: the gateway never received the charge, or none is configured. */
const OUR_FAILURES = new Set(['processing_error', 'payment_gateway_unavailable', 'processor_not_configured']);

/**
 * The offer's charge failed: made on its later day and refused or declined for the debtor's
 * part (a decline, an expired card, a deleted method), the debtor did not pay and the offer is
 * broken; made at acceptance, or failed for our part, nothing was set up and the offer is
 * pending again (expired if its `expires_at` passed).
 */
async function chargeFailed(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, chargeId: string, now: Date): Promise<void> {
  const offer = await offerRepo(trx, tenant).paidBy({ chargeId });
  if (!offer) return;
  const row = (await chargeRepo(trx, tenant).find(chargeId))!;
  if (row.scheduled_at && !OUR_FAILURES.has(row.error_code ?? '')) await breakOffer(trx, events, tenant, offer, now);
  else await reopenOffer(trx, events, tenant, offer, now);
}

/** A scheduled charge refused on its day without the gateway, or any charge declined by it (`charge.finished` follows a decline, and finds the offer moved). */
const declined: Listener<'charge.declined'> = (trx, events, tenant, { charge, now }) => chargeFailed(trx, events, tenant, charge.id, now);

/**
 * The gateway's answer for an offer's charge was recorded, by its request or by recovery after
 * a crash. Paid: completed already (`charge.paid-accounts`). Failed (declined, or released as
 * never received): chargeFailed.
 */
const finished: Listener<'charge.finished'> = async (trx, events, tenant, { charge, now }) => {
  // Only an offer's own charge (offer-acceptance.ts makes it with source `settlement_offer`) pays an offer: nothing to look up for any other.
  if (charge.status === 'failed' && charge.source === 'settlement_offer') await chargeFailed(trx, events, tenant, charge.id, now);
};

/** An offer's scheduled charge canceled before it ran: nothing is set up, and the debtor did not fail to pay. */
const canceled: Listener<'charge.canceled'> = async (trx, events, tenant, { charge, now }) => {
  const offer = await offerRepo(trx, tenant).paidBy({ chargeId: charge.id });
  if (offer) await reopenOffer(trx, events, tenant, offer, now);
};

/** An offer's ACH debit returned: an accepted offer is broken; a completed one has its write-off reversed (offer-returns.ts). */
const returned: Listener<'ach.returned'> = async (trx, events, tenant, { charge, now }) => {
  const offer = await offerRepo(trx, tenant).paidBy({ chargeId: charge.id });
  if (offer) await breakOffer(trx, events, tenant, offer, now);
  else await undoReturnedCompletion(trx, events, tenant, charge, now);
  const row = await chargeRepo(trx, tenant).find(charge.id);
  const account = row && (await debtAccountRepo(trx, tenant).find(row.debt_account_id));
  if (account) await supersedeMoved(trx, events, tenant, [account.id, ...(account.parent_id ? [account.parent_id] : [])], now);
};

const defaulted: Listener<'plan.defaulted'> = async (trx, events, tenant, { planId, now }) => {
  const offer = await offerRepo(trx, tenant).paidBy({ planId });
  if (offer) await breakOffer(trx, events, tenant, offer, now);
};

/** Registers the offers' listeners (once, however often it is called); after the plans' own. */
export function listenForSettlements(): void {
  listenAll('charge.paid-accounts', chargesPaid);
  listenAll('instalment.paid', instalmentsPaid);
  listen('money.given-back', givenBack);
  listen('account.updated', updated);
  listen('charge.declined', declined);
  listen('charge.finished', finished);
  listen('charge.canceled', canceled);
  listen('ach.returned', returned);
  listen('plan.defaulted', defaulted);
}
