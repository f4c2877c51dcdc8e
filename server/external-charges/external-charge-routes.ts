import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { externalChargeService } from './external-charge-service';

export function externalChargeRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const externalCharges = externalChargeService(deps);

  routes.post('/external-charges', async (req, res) => {
    res.status(201).json({ data: await externalCharges.create(tenantOf(res), req.body) });
  });

  routes.get('/external-charges', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await externalCharges.list(tenantOf(res), { debt_account_id: req.query.debt_account_id }, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/external-charges/{id}', async (req, res) => {
    res.json({ data: await externalCharges.find(tenantOf(res), req.params.id) });
  });

  routes.post('/external-charges/{id}/reverse', async (req, res) => {
    res.json({ data: await externalCharges.reverse(tenantOf(res), req.params.id, req.body?.reason ?? null) });
  });
}
