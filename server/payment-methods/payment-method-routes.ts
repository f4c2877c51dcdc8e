import { Router } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../http/auth';
import { typedRoutes } from '../http/typed-routes';
import { paymentMethodToApi } from './payment-method-mapper';
import { paymentMethodService } from './payment-method-service';

export function paymentMethodRouter(deps: AppDeps): Router {
  const methods = paymentMethodService(deps);
  const router = Router();
  typedRoutes(router).post('/customers/{id}/payment-methods', async (req, res) => {
    const row = await methods.create(tenantOf(res), req.params.id, req.body);
    res.status(201).json({ data: paymentMethodToApi(row) });
  });
  return router;
}
