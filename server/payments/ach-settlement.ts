/**
 * The later outcome of an ACH debit, carried out by a durable job (pg-boss, queue
 * `ach-settlement`) enqueued with the charge and due when the gateway said to ask again
 * (SANDBOX_ACH_SETTLEMENT_SECONDS for the simulator). Safe to run twice: a charge that is no
 * longer pending (settled, returned, voided) is left alone. A sandbox's clock moved past a
 * debit's `settles_at` settles it at once (due-work.ts); the job then finds it done. A returned
 * instalment's debit reopens the instalment (payment plans listen: events/listeners.ts). The
 * gateway is asked with no transaction held (it answers a repeat the same); the answer is then
 * recorded under the account's lock if the debit is still pending.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { enqueueIn, QUEUES } from '../jobs/queue';
import { nowFor, withClock } from '../kernel/clock';
import { announce } from '../events/listeners';
import { CHARGES, chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import { gatewayFor } from '../gateway/gateways';
import type { LaterOutcome } from '../gateway/gateway';
import type { PaymentDeps } from './payment-deps';
import { achOutcome, chargeMade } from './payment-events';
import { lockAccount, moveBalances } from './balances';

export interface SettlementJob {
  organizationId: string;
  environment: Tenant['environment'];
  chargeId: string;
}

export function settlementJob(tenant: Tenant, chargeId: string): SettlementJob {
  return { organizationId: tenant.organizationId, environment: tenant.environment, chargeId };
}

/** A sandbox's pending ACH debits whose settle time (on its clock) is at or before `upTo`, earliest first. */
export async function dueSettlementsOf(db: Knex, tenant: Tenant, upTo: Date, limit = 200): Promise<{ id: string; due_at: Date }[]> {
  return scoped(db, CHARGES, tenant)
    .where({ status: 'pending' })
    .where('settles_at', '<=', upTo)
    .orderBy([{ column: 'settles_at' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'settles_at as due_at');
}

/** Answers whether the debit's outcome was recorded (false: not pending any more, or still pending). */
export async function settleAch(deps: PaymentDeps, job: SettlementJob): Promise<boolean> {
  const tenant: Tenant = { organizationId: job.organizationId, environment: job.environment, tokenHash: '' };
  const peek = await chargeRepo(deps.db, tenant).find(job.chargeId);
  if (!peek || peek.status !== 'pending') return false;
  const gateway = await gatewayFor(deps, tenant, peek.gateway);
  // The debit's gateway is no longer configured: ask again later rather than guess.
  if (!gateway) throw new Error('No payment gateway to ask for the outcome of an ACH debit');
  const outcome = await gateway.outcome(peek.gateway_reference!);
  return deps.db.transaction((trx) => recordAchOutcome(deps, trx, tenant, job.chargeId, outcome));
}

/**
 * A payment answered pending (a card held by the processor's fraud filters) that failed after
 * all: it never took the money, so it reads as any declined charge (`failed` with the decline's
 * code, its charge transactions `failed` of 0), what it counted is owed again
 * (`debt-account.update`, `charge.failed`), and what it paid is undone as after an ACH return
 * (`ach.returned`'s listeners: a plan's instalment reopened, a settlement undone).
 */
async function recordFailedLater(
  deps: PaymentDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  charge: ChargeRow,
  parts: { debt_account_id: string; amount: number | string }[],
  outcome: Extract<LaterOutcome, { status: 'failed' }>,
  now: Date,
): Promise<boolean> {
  const charges = chargeRepo(trx, tenant);
  const failed = await charges.update(charge.id, { status: 'failed', error: outcome.message, error_code: outcome.code, settles_at: null });
  await charges.failTransactions(charge.id);
  const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: Number(part.amount) })));
  await chargeMade(deps.events, trx, tenant, failed, moved);
  await announce(trx, deps.events, tenant, 'ach.returned', { charge: { ...charge, error: outcome.message, return_code: null }, now });
  return true;
}

/**
 * Records the later outcome of the ACH debit `chargeId` on `trx` if it is still pending (the
 * gateway's answer to the settlement job, or what the processor reported by itself): settled, or
 * returned (the balance given back, `transaction.returned-ach`, an instalment it paid reopened, a
 * settlement it completed undone). Answers whether it recorded a settlement or a return.
 */
export async function recordAchOutcome(deps: PaymentDeps, trx: Knex.Transaction, tenant: Tenant, chargeId: string, outcome: LaterOutcome): Promise<boolean> {
  const job = settlementJob(tenant, chargeId);
  const charges = chargeRepo(trx, tenant);
  const peek = await charges.find(chargeId);
  if (!peek || peek.status !== 'pending') return false;
  // The account family first, then the charge: the order a charge and a void use.
  await lockAccount(trx, tenant, peek.debt_account_id);
  const charge = (await charges.find(chargeId, { forUpdate: true }))!;
  if (charge.status !== 'pending') return false;
  const now = nowFor(deps.clock, await withClock(trx, tenant));
  if (outcome.status === 'pending') {
    await charges.update(charge.id, { settles_at: new Date(now.getTime() + outcome.checkAfterSeconds * 1000) });
    await enqueueIn(deps.boss, trx, QUEUES.achSettlement, job, { startAfter: outcome.checkAfterSeconds });
    return false;
  }
  const parts = await charges.allocations(charge.id);
  if (outcome.status === 'failed') return recordFailedLater(deps, trx, tenant, charge, parts, outcome, now);
  if (outcome.status === 'settled') {
    await charges.update(charge.id, { status: 'succeeded', settled_at: new Date() });
    await charges.setTransactionStatus(charge.id, 'charge', 'succeeded');
    const rows = await charges.insertTransactions(
      charge.id,
      parts.map((part) => ({ debt_account_id: part.debt_account_id, kind: 'ach_settlement', status: 'settled', amount: 0, gateway_reference: charge.gateway_reference })),
    );
    await achOutcome(deps.events, trx, tenant, 'transaction.settled-ach', rows, []);
    return true;
  }
  await charges.update(charge.id, { status: 'returned', return_code: outcome.code, error: outcome.message, error_code: outcome.code });
  await charges.setTransactionStatus(charge.id, 'charge', 'returned');
  const rows = await charges.insertTransactions(
    charge.id,
    parts.map((part) => ({
      debt_account_id: part.debt_account_id,
      kind: 'ach_return',
      status: 'returned',
      amount: -Number(part.amount),
      return_code: outcome.code,
      gateway_reference: charge.gateway_reference,
    })),
  );
  const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: Number(part.amount) })));
  await achOutcome(deps.events, trx, tenant, 'transaction.returned-ach', rows, moved);
  // An instalment it paid is open again (retried, or the plan defaults).
  await announce(trx, deps.events, tenant, 'ach.returned', { charge: { ...charge, error: outcome.message, return_code: outcome.code }, now });
  return true;
}
