/**
 * The bank returned an ACH debit that paid a completed offer (its charge, an instalment of its
 * plan, or the payment that completed it): the settled sum is no longer paid, so the
 * write-off is undone, by transactions of its own and never by deleting it: one
 * `settlement_write_off_reversal` per write-off row, of the same charge, for its negative, so
 * the forgiven cents are owed again. The offer is then `accepted` again while its plan retries
 * the returned instalment (the plans' listener has reopened it; the settled sum is still what
 * is asked, and the retry completes it again), and `broken` otherwise: a single charge, a
 * payment outside the plan, or a plan that defaulted or was not reopened. Runs after the
 * plans' listener, in the transaction that recorded the return, with the account locked.
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { lockAccount, moveBalances } from '../payments/balances';
import { chargeRepo } from '../charge-store/charge-repo';
import { planRepo } from '../payment-plans/plan-repo';
import { offerRepo, setSettlementDiscount, type OfferRow } from './offer-repo';
import { move } from './offer-lifecycle';

/** Undoes the completion of `offer`; answers the accounts whose balance rose. */
async function reverseWriteOff(trx: Knex.Transaction, tenant: Tenant, offer: OfferRow): Promise<string[]> {
  if (!offer.write_off_charge_id) return [];
  const charges = chargeRepo(trx, tenant);
  const rows = await charges.transactionsOfCharge(offer.write_off_charge_id);
  const written = rows.filter((row) => row.kind === 'settlement_write_off');
  const reversed = rows.filter((row) => row.kind === 'settlement_write_off_reversal');
  // Each completion writes off once and each return reverses it once: pairs that balance are done.
  const open = written.slice(reversed.length);
  if (open.length === 0) return [];
  await charges.insertTransactions(
    offer.write_off_charge_id,
    open.map((row) => ({ debt_account_id: row.debt_account_id, kind: 'settlement_write_off_reversal', status: 'succeeded', amount: -Number(row.amount), gateway_reference: null })),
  );
  return moveBalances(trx, tenant, open.map((row) => ({ debt_account_id: row.debt_account_id, delta: Number(row.amount) })));
}

export async function undoReturnedCompletion(
  trx: Knex.Transaction,
  events: EventRecorder,
  tenant: Tenant,
  charge: { id: string; payment_plan_id: string | null },
  now: Date,
): Promise<boolean> {
  return undoCompletion(trx, events, tenant, charge, now, { planRetries: true });
}

/**
 * The agency refunded (wholly or partly) or voided a charge that paid a completed offer: the
 * settled sum is no longer paid, so the write-off is reversed as for a return, and the offer
 * is `broken` whatever paid it (nothing retries a refund). A later refund of the same charge
 * finds the offer broken and reverses nothing more. Runs in the refund's or void's transaction.
 */
export async function undoGivenBackCompletion(
  trx: Knex.Transaction,
  events: EventRecorder,
  tenant: Tenant,
  charge: { id: string; payment_plan_id: string | null },
  now: Date,
): Promise<boolean> {
  return undoCompletion(trx, events, tenant, charge, now, { planRetries: false });
}

async function undoCompletion(
  trx: Knex.Transaction,
  events: EventRecorder,
  tenant: Tenant,
  charge: { id: string; payment_plan_id: string | null },
  now: Date,
  { planRetries }: { planRetries: boolean },
): Promise<boolean> {
  const found = await offerRepo(trx, tenant).completedBy(charge);
  if (!found) return false;
  await lockAccount(trx, tenant, found.debt_account_id);
  const offer = (await offerRepo(trx, tenant).find(found.id, { forUpdate: true }))!;
  if (offer.status !== 'completed') return false;
  const moved = await reverseWriteOff(trx, tenant, offer);
  const plan = planRetries && offer.payment_plan_id && charge.payment_plan_id === offer.payment_plan_id ? await planRepo(trx, tenant).find(offer.payment_plan_id) : undefined;
  if (plan?.status === 'active') {
    // The plan retries the instalment: the settled sum is asked again, and its payment completes the offer again.
    await setSettlementDiscount(trx, tenant, offer.debt_account_id, Number(offer.discount));
    await move(events, trx, tenant, offer, { status: 'accepted', completed_at: null }, now, moved);
  } else {
    await move(events, trx, tenant, offer, { status: 'broken', completed_at: null, ended_at: now }, now, moved);
  }
  return true;
}
