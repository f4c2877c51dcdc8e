/**
 * A chargeback, as a rule: a cardholder disputed the charge with their bank and the money is
 * taken back at once. It gives the money back to the accounts the charge paid (a `chargeback`
 * transaction each, the last-paid first, as a refund does), the charge reads `returned` with
 * errorCode `chargeback` and lists it, and what the payment did to a plan or a settlement is
 * undone as for an ACH return (`ach.returned`'s listeners). Won later: the money is the agency's
 * again (`chargeback_reversal`, the charge back to `succeeded`); lost: recorded, nothing moves.
 * Each is applied once per dispute, under the account family's and the charge's locks.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { nowFor, withClock } from '../kernel/clock';
import { announce } from '../events/listeners';
import { CHARGES, chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import type { ProcessorNotice } from '../gateway/processor-notices';
import { lockAccount, moveBalances } from '../payments/balances';
import type { PaymentDeps } from '../payments/payment-deps';
import { achOutcome } from '../payments/payment-events';

type Chargeback = components['schemas']['Chargeback'];
type Opened = Extract<ProcessorNotice, { kind: 'chargeback.opened' }>;
type Closed = Extract<ProcessorNotice, { kind: 'chargeback.won' | 'chargeback.lost' }>;

/** The charge and its account family locked (the order a charge, a void and a return take them in). */
async function locked(trx: Knex.Transaction, tenant: Tenant, charge: ChargeRow): Promise<ChargeRow> {
  await lockAccount(trx, tenant, charge.debt_account_id);
  return (await chargeRepo(trx, tenant).find(charge.id, { forUpdate: true }))!;
}

async function keepChargebacks(trx: Knex.Transaction, chargeId: string, chargebacks: Chargeback[], values: Record<string, unknown>): Promise<void> {
  await trx(CHARGES).where({ id: chargeId }).update({ ...values, chargebacks: JSON.stringify(chargebacks), updated_at: trx.fn.now() });
}

/** What the charge paid and still holds, last-paid first, up to `amount`. */
async function partsToTakeBack(trx: Knex.Transaction, tenant: Tenant, charge: ChargeRow, amount: number): Promise<{ debt_account_id: string; amount: number }[]> {
  const parts: { debt_account_id: string; amount: number }[] = [];
  let remaining = amount;
  for (const part of (await chargeRepo(trx, tenant).allocations(charge.id)).reverse()) {
    const take = Math.min(remaining, Number(part.amount) - Number(part.refunded_amount));
    if (take > 0) parts.push({ debt_account_id: part.debt_account_id, amount: take });
    remaining -= take;
    if (remaining <= 0) break;
  }
  return parts;
}

export async function openChargeback(deps: PaymentDeps, tenant: Tenant, found: ChargeRow, notice: Opened): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const charge = await locked(trx, tenant, found);
    if (charge.chargebacks.some((each) => each.id === notice.disputeId)) return;
    const now = nowFor(deps.clock, await withClock(trx, tenant));
    const entry: Chargeback = { id: notice.disputeId, status: 'open', amount: notice.amount, reason: notice.reason.slice(0, 64), opened_at: now.toISOString(), closed_at: null };
    // Money the charge no longer holds (voided, refunded, returned) is not taken back twice.
    const holds = charge.status === 'succeeded' || charge.status === 'partially_refunded' || charge.status === 'pending';
    const parts = holds ? await partsToTakeBack(trx, tenant, charge, Math.min(notice.amount, Number(charge.amount) - Number(charge.refunded_amount))) : [];
    const error = `The cardholder disputed the payment with their bank (a chargeback: ${entry.reason}); the money was taken back.`;
    await keepChargebacks(trx, charge.id, [...charge.chargebacks, entry], holds ? { status: 'returned', error, error_code: 'chargeback', return_code: null } : {});
    if (parts.length === 0) return;
    const charges = chargeRepo(trx, tenant);
    const rows = await charges.insertTransactions(
      charge.id,
      parts.map((part) => ({ debt_account_id: part.debt_account_id, kind: 'chargeback', status: 'returned', amount: -part.amount, gateway_reference: charge.gateway_reference })),
    );
    const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: part.amount })));
    // The document's events for money that came back from the payer's bank, and the charge as it now reads.
    await achOutcome(deps.events, trx, tenant, 'transaction.returned-ach', rows, moved);
    await deps.events.record(trx, tenant, [{ name: 'charge.failed', ids: [charge.id] }]);
    // A plan's instalment it paid is open again, a settlement it completed undone: as for an ACH return.
    await announce(trx, deps.events, tenant, 'ach.returned', { charge: { ...charge, error, return_code: null }, now });
  });
}

export async function closeChargeback(deps: PaymentDeps, tenant: Tenant, found: ChargeRow, notice: Closed): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const charge = await locked(trx, tenant, found);
    const open = charge.chargebacks.find((each) => each.id === notice.disputeId && each.status === 'open');
    if (!open) return;
    const now = nowFor(deps.clock, await withClock(trx, tenant));
    const won = notice.kind === 'chargeback.won';
    const chargebacks = charge.chargebacks.map((each) => (each === open ? { ...each, status: won ? ('won' as const) : ('lost' as const), closed_at: now.toISOString() } : each));
    if (!won) {
      await keepChargebacks(trx, charge.id, chargebacks, {});
      return;
    }
    const charges = chargeRepo(trx, tenant);
    const taken = await charges.transactions().where({ charge_id: charge.id, kind: 'chargeback' }).select('debt_account_id', 'amount');
    const stillOpen = chargebacks.some((each) => each.status === 'open');
    const status = stillOpen ? charge.status : Number(charge.refunded_amount) > 0 ? 'partially_refunded' : 'succeeded';
    await keepChargebacks(trx, charge.id, chargebacks, stillOpen ? {} : { status, error: null, error_code: null });
    if (taken.length === 0) return;
    await charges.insertTransactions(
      charge.id,
      taken.map((row: { debt_account_id: string; amount: string }) => ({ debt_account_id: row.debt_account_id, kind: 'chargeback_reversal', status: 'succeeded', amount: -Number(row.amount), gateway_reference: charge.gateway_reference })),
    );
    const moved = await moveBalances(trx, tenant, taken.map((row: { debt_account_id: string; amount: string }) => ({ debt_account_id: row.debt_account_id, delta: Number(row.amount) })));
    await deps.events.record(trx, tenant, [
      { name: 'charge.succeeded', ids: [charge.id] },
      { name: 'debt-account.update', ids: moved },
    ]);
  });
}
