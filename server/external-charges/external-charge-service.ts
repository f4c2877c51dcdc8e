/**
 * External charges as a story: money that reached the agency outside our gateway lowers the
 * balance in one transaction, with the account family locked as a charge locks it, and a
 * reversal (a bounced cheque) gives it back. No gateway is asked, so production records them
 * without `PAYMENT_GATEWAY`.
 *
 * Only the balance limits an external charge: the payment terms that refuse a payment (an
 * account on hold or in dispute, not active, the minimum, `billing_type`) do not apply, because
 * the money was already received and refusing to record it would leave the balance wrong.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { isCalendarDate, todayUtc } from '../kernel/dates';
import { announce } from '../events/listeners';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { lockAccount, moveBalances, spread } from '../payments/balances';
import { EXTERNAL_CHARGE_COLUMNS, EXTERNAL_CHARGES, externalChargeRepo, type ExternalChargeRow } from './external-charge-repo';
import { externalChargeToApi } from './external-charge-mapper';

type S = components['schemas'];

export type ExternalChargeDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

/** `paid_at` is a real date, not after today on the tenant's clock (read as a UTC day). */
function checkPaidAt(paidAt: string, now: Date): void {
  if (!isCalendarDate(paidAt)) throw ApiError.field('paid_at', 'must be a date written YYYY-MM-DD');
  const today = todayUtc(now);
  if (paidAt > today) throw ApiError.field('paid_at', `must not be later than today (${today})`);
}

async function shown(db: Knex, tenant: Tenant, rows: ExternalChargeRow[]): Promise<S['ExternalCharge'][]> {
  const transactions = await externalChargeRepo(db, tenant).transactionsOf(rows.map((row) => row.id));
  return rows.map((row) => externalChargeToApi(row, transactions.get(row.id) ?? []));
}

async function create(deps: ExternalChargeDeps, tenant: Tenant, body: S['ExternalChargeCreate']): Promise<S['ExternalCharge']> {
  const now = nowFor(deps.clock, tenant);
  checkPaidAt(body.paid_at, now);
  return deps.db.transaction(async (trx) => {
    const family = await lockAccount(trx, tenant, body.debt_account_id);
    if (!family) throw ApiError.notFound('Debt account');
    const { account } = family;
    const balance = Number(account.current_balance);
    if (body.amount > balance) throw ApiError.field('amount', `must not be more than the account's current balance (${balance})`);

    const repo = externalChargeRepo(trx, tenant);
    const row = await repo.insert({
      debt_account_id: account.id,
      customer_id: account.customer_id,
      amount: body.amount,
      paid_at: body.paid_at,
      method: body.method,
      reference: body.reference ?? null,
      note: body.note ?? null,
    });
    const parts = spread(family, body.amount);
    const made = await repo.insertTransactions(row.id, 'external', parts);
    const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: -part.amount })));
    // A plan whose account this paid off completes, as after a one-time charge.
    await announce(trx, deps.events, tenant, 'charge.paid-accounts', { accountIds: moved, now });
    await deps.events.record(trx, tenant, [
      { name: 'external-charge.create', ids: [row.id] },
      { name: 'debt-account.update', ids: moved },
    ]);
    return externalChargeToApi(row, made);
  });
}

async function reverse(deps: ExternalChargeDeps, tenant: Tenant, id: string, reason: string | null): Promise<S['ExternalCharge']> {
  const now = nowFor(deps.clock, tenant);
  return deps.db.transaction(async (trx) => {
    const repo = externalChargeRepo(trx, tenant);
    const unlocked = await repo.find(id);
    if (!unlocked) throw ApiError.notFound('External charge');
    // Accounts first, then the charge: the order a charge's void takes, so the two queue.
    await lockAccount(trx, tenant, unlocked.debt_account_id);
    const row = (await repo.find(id, { forUpdate: true }))!;
    if (row.status === 'reversed') throw ApiError.conflict('This external charge was already reversed.');

    const paid = (await repo.transactionsOf([row.id])).get(row.id)!.filter((transaction) => transaction.kind === 'external');
    const parts = paid.map((transaction) => ({ debt_account_id: transaction.debt_account_id, amount: Number(transaction.amount) }));
    await repo.insertTransactions(row.id, 'external_reversal', parts.map((part) => ({ ...part, amount: -part.amount })));
    const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: part.amount })));
    const reversed = await repo.markReversed(row.id, now, reason);
    await deps.events.record(trx, tenant, [{ name: 'debt-account.update', ids: moved }]);
    return (await shown(trx, tenant, [reversed]))[0]!;
  });
}

export function externalChargeService(deps: ExternalChargeDeps) {
  const { db } = deps;
  return {
    create: (tenant: Tenant, body: S['ExternalChargeCreate']) => create(deps, tenant, body),
    reverse: (tenant: Tenant, id: string, reason: string | null) => reverse(deps, tenant, id, reason),

    async find(tenant: Tenant, id: string): Promise<S['ExternalCharge']> {
      const row = await externalChargeRepo(db, tenant).find(id);
      if (!row) throw ApiError.notFound('External charge');
      return (await shown(db, tenant, [row]))[0]!;
    },

    /** Newest first; an unknown account gives an empty list. */
    async list(tenant: Tenant, filters: { debt_account_id?: string }, page: PageRequest): Promise<Listed<S['ExternalCharge']>> {
      const query = externalChargeRepo(db, tenant).externalCharges();
      if (filters.debt_account_id) query.where(`${EXTERNAL_CHARGES}.debt_account_id`, (await debtAccountRepo(db, tenant).find(filters.debt_account_id))?.id ?? null);
      return listPage<ExternalChargeRow, S['ExternalCharge']>(query, page, { columns: EXTERNAL_CHARGE_COLUMNS, table: EXTERNAL_CHARGES, order: 'desc' }, (rows) =>
        shown(db, tenant, rows),
      );
    },
  };
}
