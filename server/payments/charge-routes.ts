import { Router, type Request } from 'express';
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import { tenantOf, type Tenant } from '../http/auth';
import { ApiError } from '../http/errors';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { idempotencyKeyOf } from '../idempotency/idempotency';
import { customerRepo } from '../customers/customer-repo';
import { DEBT_ACCOUNTS, debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { scoped } from '../db/tenant';
import { CHARGE_COLUMNS, CHARGES, chargeRepo, TRANSACTION_COLUMNS, TRANSACTIONS, type ChargeRow, type TransactionRow } from './charge-repo';
import { chargeToApi, transactionToApi } from './charge-mapper';
import { refundCharge, voidCharge } from './charge-changes';
import { createCharge } from './charge-service';
import { dateRange, type DateRange } from './date-ranges';
import { requireGateway } from './gateways';

/** An account key as the ids of the account and its children; [] when it does not exist. */
async function accountAndChildren(db: Knex, tenant: Tenant, key: string): Promise<string[]> {
  const account = await debtAccountRepo(db, tenant).find(key);
  if (!account) return [];
  const children = await scoped(db, DEBT_ACCOUNTS, tenant).where({ parent_id: account.id }).pluck('id');
  return [account.id, ...children];
}

function days(req: Request, now: Date): { first?: string; last?: string } {
  const { start_date, end_date, date_range } = req.query as Record<string, string | undefined>;
  if (date_range) {
    if (start_date || end_date) throw ApiError.field('date_range', 'cannot be combined with start_date or end_date');
    return dateRange(date_range as DateRange, now);
  }
  if (start_date && end_date && end_date < start_date) throw ApiError.field('end_date', 'must not be before start_date');
  return { first: start_date, last: end_date };
}

export function chargeRouter(deps: AppDeps): Router {
  const { db } = deps;
  const router = Router();

  router.post('/charges', async (req, res) => {
    const tenant = tenantOf(res);
    const { charge, declined } = await createCharge(deps, requireGateway(deps, tenant), tenant, req.body, idempotencyKeyOf(res));
    if (declined) {
      res.status(declined.status).json({ ...declined.body(), charge_id: charge.id });
      return;
    }
    res.status(201).json({ data: chargeToApi(charge) });
  });

  router.get('/charges', async (req, res) => {
    const tenant = tenantOf(res);
    const query = chargeRepo(db, tenant).charges();
    const { debt_account_id, customer_id, status } = req.query as Record<string, string | undefined>;
    if (debt_account_id) query.whereIn(`${CHARGES}.debt_account_id`, (await accountAndChildren(db, tenant, debt_account_id)).slice(0, 1));
    if (customer_id) query.where(`${CHARGES}.customer_id`, (await customerRepo(db, tenant).find(customer_id))?.id ?? null);
    if (status) query.where(`${CHARGES}.status`, status);
    const page = pageRequest(req);
    const { total, rows } = await paginate<ChargeRow>(query, page, CHARGE_COLUMNS, CHARGES, 'desc');
    res.json(envelope(req, page, total, rows, rows.map(chargeToApi)));
  });

  router.get('/charges/:id', async (req, res) => {
    const charge = await chargeRepo(db, tenantOf(res)).find(req.params.id!);
    if (!charge) throw ApiError.notFound('Charge');
    res.json({ data: chargeToApi(charge) });
  });

  router.post('/charges/:id/void', async (req, res) => {
    const tenant = tenantOf(res);
    res.json({ data: chargeToApi(await voidCharge(deps, () => requireGateway(deps, tenant), tenant, req.params.id!, deps.clock())) });
  });

  router.post('/charges/:id/refund', async (req, res) => {
    const tenant = tenantOf(res);
    const amount = (req.body as { amount?: number } | undefined)?.amount;
    res.json({ data: chargeToApi(await refundCharge(deps, () => requireGateway(deps, tenant), tenant, req.params.id!, amount)) });
  });

  router.get('/transactions', async (req, res) => {
    const tenant = tenantOf(res);
    const query = chargeRepo(db, tenant).transactions();
    const { debt_account_id } = req.query as Record<string, string | undefined>;
    if (debt_account_id) query.whereIn(`${TRANSACTIONS}.debt_account_id`, await accountAndChildren(db, tenant, debt_account_id));
    const { first, last } = days(req, deps.clock());
    if (first) query.where(`${TRANSACTIONS}.submitted_at`, '>=', `${first}T00:00:00Z`);
    if (last) query.whereRaw(`${TRANSACTIONS}.submitted_at < (?::date + 1)::timestamptz`, [last]);
    const page = pageRequest(req);
    const { total, rows } = await paginate<TransactionRow>(query, page, TRANSACTION_COLUMNS, TRANSACTIONS, 'desc');
    res.json(envelope(req, page, total, rows, rows.map(transactionToApi)));
  });

  router.get('/transactions/:id', async (req, res) => {
    const row = await chargeRepo(db, tenantOf(res)).findTransaction(req.params.id!);
    if (!row) throw ApiError.notFound('Transaction');
    res.json({ data: transactionToApi(row) });
  });

  return router;
}
