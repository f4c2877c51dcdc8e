/**
 * Void and refund. A void cancels a charge before it settles (a card charge on the UTC day it
 * was made, an ACH debit while pending); a refund gives back money of a settled charge, in
 * part or in full, up to what is left. Both give the balance back to the accounts the charge
 * paid (a partial refund to the last-paid first), and record transactions of their own.
 *
 * Each in three steps, as a charge: checked under the locks in one transaction, the gateway asked
 * with nothing held (a key naming the change: `void:<charge>`, `refund:<charge>:<refunded so
 * far>:<amount>`, so the same request again is the same request to the gateway), then recorded in a
 * second transaction if the charge is still as it was checked.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { lockAccount, moveBalances } from './balances';
import { chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import { GatewayRefusal } from '../gateway/gateway';
import type { PaymentGateway } from '../gateway/gateway';
import type { PaymentDeps } from './payment-deps';
import { moneyGivenBack } from './payment-events';

/** The charge and its account family, locked in the order a new charge locks them. */
async function lockCharge(trx: Knex.Transaction, tenant: Tenant, id: string): Promise<ChargeRow> {
  const charges = chargeRepo(trx, tenant);
  const unlocked = await charges.find(id);
  if (!unlocked) throw ApiError.notFound('Charge');
  await lockAccount(trx, tenant, unlocked.debt_account_id);
  return (await charges.find(id, { forUpdate: true }))!;
}

async function ask(call: () => Promise<void>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof GatewayRefusal) throw ApiError.conflict(`The payment gateway refused: ${error.message}`);
    throw error;
  }
}

const sameUtcDay = (a: Date, b: Date) => a.toISOString().slice(0, 10) === b.toISOString().slice(0, 10);

/** `gateway` (the one that made the charge) is asked for once the charge is found: another tenant's charge is a 404 first. */
export async function voidCharge(deps: PaymentDeps, gateway: (made: string) => Promise<PaymentGateway>, tenant: Tenant, id: string, now: Date): Promise<ChargeRow> {
  const checked = await deps.db.transaction(async (trx) => {
    const charge = await lockCharge(trx, tenant, id);
    const voidable =
      (charge.payment_method_type === 'ach' && charge.status === 'pending') ||
      (charge.payment_method_type === 'card' && charge.status === 'succeeded' && sameUtcDay(charge.created_at, now));
    if (!voidable) {
      throw ApiError.conflict(
        charge.status === 'succeeded'
          ? 'The charge has settled and can no longer be voided; refund it instead.'
          : charge.status === 'scheduled'
            ? 'The charge is scheduled and has not run; cancel it instead (POST /charges/{id}/cancel).'
            : `A ${charge.status} charge cannot be voided.`,
      );
    }
    return charge;
  });
  await ask(async () => (await gateway(checked.gateway)).void(checked.gateway_reference!, `void:${checked.id}`));
  return deps.db.transaction(async (trx) => {
    const charge = await lockCharge(trx, tenant, id);
    // Voided meanwhile by the same request sent twice: the gateway answered both as one.
    if (charge.status === 'voided') return charge;
    if (charge.status !== checked.status) throw ApiError.conflict(`The charge became ${charge.status} meanwhile; it was not voided.`);
    const charges = chargeRepo(trx, tenant);
    const parts = await charges.allocations(charge.id);
    const rows = await charges.insertTransactions(
      charge.id,
      parts.map((part) => ({ debt_account_id: part.debt_account_id, kind: 'void', status: 'succeeded', amount: -Number(part.amount), gateway_reference: charge.gateway_reference })),
    );
    const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: Number(part.amount) })));
    const voided = await charges.update(charge.id, { status: 'voided', settled_at: null });
    await moneyGivenBack(deps.events, trx, tenant, 'void.succeeded', rows, moved);
    return voided;
  });
}

export async function refundCharge(deps: PaymentDeps, gateway: (made: string) => Promise<PaymentGateway>, tenant: Tenant, id: string, requested: number | undefined): Promise<ChargeRow> {
  const checked = await deps.db.transaction(async (trx) => {
    const charge = await lockCharge(trx, tenant, id);
    if (charge.status !== 'succeeded' && charge.status !== 'partially_refunded') {
      throw ApiError.conflict(
        charge.status === 'pending' ? 'The ACH debit has not settled yet; void it instead.' : `A ${charge.status} charge cannot be refunded.`,
      );
    }
    const left = Number(charge.amount) - Number(charge.refunded_amount);
    const amount = requested ?? left;
    if (amount > left) throw ApiError.field('amount', `must not exceed what is left to refund (${left})`);
    return { charge, amount };
  });
  const { amount } = checked;
  const key = `refund:${id}:${checked.charge.refunded_amount}:${amount}`;
  await ask(async () => (await gateway(checked.charge.gateway)).refund(checked.charge.gateway_reference!, amount, key));
  return deps.db.transaction(async (trx) => {
    const charge = await lockCharge(trx, tenant, id);
    const charges = chargeRepo(trx, tenant);
    // The same refund sent twice at once: the gateway made it once, and it is recorded once.
    if (await charges.hasGatewayKey(charge.id, key)) return charge;
    const parts = [];
    let remaining = amount;
    for (const part of (await charges.allocations(charge.id)).reverse()) {
      const take = Math.min(remaining, Number(part.amount) - Number(part.refunded_amount));
      if (take > 0) parts.push({ debt_account_id: part.debt_account_id, amount: take });
      remaining -= take;
      if (remaining === 0) break;
    }
    for (const part of parts) await charges.addRefunded(charge.id, part.debt_account_id, part.amount);
    const rows = await charges.insertTransactions(
      charge.id,
      parts.map((part, index) => ({
        debt_account_id: part.debt_account_id,
        kind: 'refund',
        status: 'succeeded',
        amount: -part.amount,
        gateway_reference: charge.gateway_reference,
        // On the first row only: the index keeps one per charge and key.
        ...(index === 0 ? { gateway_key: key } : {}),
      })),
    );
    const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: part.amount })));
    const refunded = Number(charge.refunded_amount) + amount;
    const updated = await charges.update(charge.id, {
      refunded_amount: refunded,
      status: refunded === Number(charge.amount) ? 'refunded' : 'partially_refunded',
    });
    await moneyGivenBack(deps.events, trx, tenant, 'refund.succeeded', rows, moved);
    return updated;
  });
}
