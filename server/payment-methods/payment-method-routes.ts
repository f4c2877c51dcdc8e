import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { paymentMethodToApi } from './payment-method-mapper';
import { createPaymentMethod } from './payment-method-service';

export function paymentMethodRouter({ db, boss, secrets }: AppDeps): Router {
  const router = Router();
  router.post('/customers/:id/payment-methods', async (req, res) => {
    const row = await createPaymentMethod(db, boss, tenantOf(res), secrets, req.params.id!, req.body);
    res.status(201).json({ data: paymentMethodToApi(row) });
  });
  return router;
}
