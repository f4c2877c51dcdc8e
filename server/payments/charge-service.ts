/**
 * Charges and transactions as the routes use them: `chargeService(deps).create(tenant, body,
 * key)` and the reads. Money moves in create-charge.ts (a charge) and charge-changes.ts (void,
 * refund); the gateway is asked for only once the request has been found to concern this tenant.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { customerRepo } from '../customer-store/customer-repo';
import { DEBT_ACCOUNTS, debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { scoped } from '../db/tenant';
import { CHARGE_COLUMNS, CHARGES, chargeRepo, TRANSACTION_COLUMNS, TRANSACTIONS, type ChargeRow, type TransactionRow } from '../charge-store/charge-repo';
import { chargeToApi, transactionToApi } from '../charge-store/charge-mapper';
import { refundCharge, voidCharge } from './charge-changes';
import { createCharge, type ChargeContext, type ChargeOutcome } from './create-charge';
import { dateRange, type DateRange } from './date-ranges';
import { cancelScheduledCharge } from './scheduled-charges';
import { requireGateway } from '../gateway/gateways';
import type { PaymentDeps } from './payment-deps';
import { nowFor } from '../kernel/clock';
import type { IdempotencyScope } from '../idempotency/request-fingerprint';

type S = components['schemas'];

export interface ChargeFilters {
  debt_account_id?: string;
  customer_id?: string;
  status?: string;
}

export interface TransactionFilters {
  debt_account_id?: string;
  start_date?: string;
  end_date?: string;
  date_range?: string;
}

/** An account key as the ids of the account and its children; [] when it does not exist. */
async function accountAndChildren(db: Knex, tenant: Tenant, key: string): Promise<string[]> {
  const account = await debtAccountRepo(db, tenant).find(key);
  if (!account) return [];
  const children = await scoped(db, DEBT_ACCOUNTS, tenant).where({ parent_id: account.id }).pluck('id');
  return [account.id, ...children];
}

/** Inclusive UTC days, from `start_date`/`end_date` or a named range (not both). */
function days(filters: TransactionFilters, now: Date): { first?: string; last?: string } {
  const { start_date, end_date, date_range } = filters;
  if (date_range) {
    if (start_date || end_date) throw ApiError.field('date_range', 'cannot be combined with start_date or end_date');
    return dateRange(date_range as DateRange, now);
  }
  if (start_date && end_date && end_date < start_date) throw ApiError.field('end_date', 'must not be before start_date');
  return { first: start_date, last: end_date };
}

export function chargeService(deps: PaymentDeps) {
  const { db } = deps;
  return {
    create: async (tenant: Tenant, body: S['ChargeCreate'], idempotency: IdempotencyScope | undefined, context?: ChargeContext): Promise<ChargeOutcome> =>
      createCharge(deps, await requireGateway(deps, tenant), tenant, body, idempotency, undefined, context),

    /** Newest first; a charge on a parent is listed under the parent's id only. */
    async list(tenant: Tenant, filters: ChargeFilters, page: PageRequest): Promise<Listed<S['Charge']>> {
      const query = chargeRepo(db, tenant).charges();
      if (filters.debt_account_id) query.whereIn(`${CHARGES}.debt_account_id`, (await accountAndChildren(db, tenant, filters.debt_account_id)).slice(0, 1));
      if (filters.customer_id) query.where(`${CHARGES}.customer_id`, (await customerRepo(db, tenant).find(filters.customer_id))?.id ?? null);
      if (filters.status) query.where(`${CHARGES}.status`, filters.status);
      return listPage<ChargeRow, S['Charge']>(query, page, { columns: CHARGE_COLUMNS, table: CHARGES, order: 'desc' }, (rows) => rows.map(chargeToApi));
    },

    async find(tenant: Tenant, id: string): Promise<S['Charge']> {
      const charge = await chargeRepo(db, tenant).find(id);
      if (!charge) throw ApiError.notFound('Charge');
      return chargeToApi(charge);
    },

    void: async (tenant: Tenant, id: string): Promise<S['Charge']> =>
      chargeToApi(await voidCharge(deps, (made) => requireGateway(deps, tenant, made), tenant, id, nowFor(deps.clock, tenant))),

    cancel: async (tenant: Tenant, id: string): Promise<S['Charge']> => chargeToApi(await cancelScheduledCharge(deps, tenant, id)),

    refund: async (tenant: Tenant, id: string, amount: number | undefined): Promise<S['Charge']> =>
      chargeToApi(await refundCharge(deps, (made) => requireGateway(deps, tenant, made), tenant, id, amount)),
  };
}

export function transactionService(deps: PaymentDeps) {
  const { db } = deps;
  return {
    /** Newest submitted first; an account's include its children's (where a parent's charge lands). */
    async list(tenant: Tenant, filters: TransactionFilters, page: PageRequest): Promise<Listed<S['Transaction']>> {
      const query = chargeRepo(db, tenant).transactions();
      if (filters.debt_account_id) query.whereIn(`${TRANSACTIONS}.debt_account_id`, await accountAndChildren(db, tenant, filters.debt_account_id));
      const { first, last } = days(filters, nowFor(deps.clock, tenant));
      if (first) query.where(`${TRANSACTIONS}.submitted_at`, '>=', `${first}T00:00:00Z`);
      if (last) query.whereRaw(`${TRANSACTIONS}.submitted_at < (?::date + 1)::timestamptz`, [last]);
      return listPage<TransactionRow, S['Transaction']>(query, page, { columns: TRANSACTION_COLUMNS, table: TRANSACTIONS, order: 'desc' }, (rows) =>
        rows.map(transactionToApi),
      );
    },

    async find(tenant: Tenant, id: string): Promise<S['Transaction']> {
      const row = await chargeRepo(db, tenant).findTransaction(id);
      if (!row) throw ApiError.notFound('Transaction');
      return transactionToApi(row);
    },
  };
}
