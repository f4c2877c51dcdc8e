import type { Response } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { idempotencyOf } from '../idempotency/idempotency';
import { chargeToApi } from '../charge-store/charge-mapper';
import { chargeService, transactionService } from './charge-service';

export function chargeRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const charges = chargeService(deps);
  const transactions = transactionService(deps);

  routes.post('/charges', async (req, res) => {
    const { charge, declined } = await charges.create(tenantOf(res), req.body, idempotencyOf(res));
    if (declined) {
      // The document's ChargeDeclined (a 400 naming the stored failed charge), not a success.
      (res as Response).status(declined.status).json({ ...declined.body(), charge_id: charge.id });
      return;
    }
    // The gateway has not answered in time: the charge is reserved, and finished later (charge-steps.ts).
    res.status(charge.status === 'processing' ? 202 : 201).json({ data: chargeToApi(charge) });
  });

  routes.get('/charges', async (req, res) => {
    const page = pageRequest(req);
    const { debt_account_id, customer_id, status } = req.query;
    const { total, rows, data } = await charges.list(tenantOf(res), { debt_account_id, customer_id, status }, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/charges/{id}', async (req, res) => {
    res.json({ data: await charges.find(tenantOf(res), req.params.id) });
  });

  routes.post('/charges/{id}/void', async (req, res) => {
    res.json({ data: await charges.void(tenantOf(res), req.params.id) });
  });

  routes.post('/charges/{id}/cancel', async (req, res) => {
    res.json({ data: await charges.cancel(tenantOf(res), req.params.id) });
  });

  routes.post('/charges/{id}/refund', async (req, res) => {
    res.json({ data: await charges.refund(tenantOf(res), req.params.id, req.body?.amount) });
  });

  routes.get('/transactions', async (req, res) => {
    const page = pageRequest(req);
    const { debt_account_id, start_date, end_date, date_range } = req.query;
    const { total, rows, data } = await transactions.list(tenantOf(res), { debt_account_id, start_date, end_date, date_range }, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/transactions/{id}', async (req, res) => {
    res.json({ data: await transactions.find(tenantOf(res), req.params.id) });
  });
}
