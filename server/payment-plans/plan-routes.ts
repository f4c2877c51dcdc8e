import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { planService } from './plan-service';

export function paymentPlanRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const plans = planService(deps);

  routes.post('/payment-plans', async (req, res) => {
    res.status(201).json({ data: await plans.create(tenantOf(res), req.body) });
  });

  routes.get('/payment-plans', async (req, res) => {
    const page = pageRequest(req);
    const status = req.query.status as components['schemas']['PaymentPlanStatus'] | undefined;
    const { total, rows, data } = await plans.list(tenantOf(res), page, { debt_account_id: req.query.debt_account_id, status });
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/payment-plans/{id}', async (req, res) => {
    res.json({ data: await plans.find(tenantOf(res), req.params.id) });
  });

  routes.put('/payment-plans/{id}', async (req, res) => {
    res.json({ data: await plans.update(tenantOf(res), req.params.id, req.body) });
  });

  routes.delete('/payment-plans/{id}', async (req, res) => {
    await plans.cancel(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}
