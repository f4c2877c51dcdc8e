import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { paymentMethodToApi } from './payment-method-mapper';
import { paymentMethodService } from './payment-method-service';

export function paymentMethodRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const methods = paymentMethodService(deps);

  routes.post('/customers/{id}/payment-methods', async (req, res) => {
    const row = await methods.create(tenantOf(res), req.params.id, req.body);
    res.status(201).json({ data: paymentMethodToApi(row) });
  });

  routes.get('/customers/{id}/payment-methods', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await methods.list(tenantOf(res), req.params.id, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/payment-methods/{id}', async (req, res) => {
    res.json({ data: paymentMethodToApi(await methods.find(tenantOf(res), req.params.id)) });
  });

  routes.put('/payment-methods/{id}', async (req, res) => {
    res.json({ data: paymentMethodToApi(await methods.update(tenantOf(res), req.params.id, req.body)) });
  });

  routes.delete('/payment-methods/{id}', async (req, res) => {
    await methods.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}
