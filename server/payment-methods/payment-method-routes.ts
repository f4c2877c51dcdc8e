import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { paymentMethodToApi } from './payment-method-mapper';
import { gatewayFor } from '../payments/gateways';
import { createPaymentMethod } from './payment-method-service';

export function paymentMethodRouter(deps: AppDeps): Router {
  const { db, boss, secrets } = deps;
  const router = Router();
  router.post('/customers/:id/payment-methods', async (req, res) => {
    const tenant = tenantOf(res);
    const row = await createPaymentMethod(db, boss, tenant, secrets, gatewayFor(deps, tenant), req.params.id!, req.body);
    res.status(201).json({ data: paymentMethodToApi(row) });
  });
  return router;
}
