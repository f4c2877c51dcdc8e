import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { gatewayFor } from '../payments/gateways';
import { paymentMethodToApi } from './payment-method-mapper';
import { PAYMENT_METHOD_COLUMNS, PAYMENT_METHODS, paymentMethodRepo, type PaymentMethodRow } from './payment-method-repo';
import { createPaymentMethod } from './payment-method-service';
import { customerIdOf, deletePaymentMethod, findPaymentMethod, updatePaymentMethod } from './payment-method-changes';

export function paymentMethodRouter(deps: AppDeps): Router {
  const { db, boss, secrets } = deps;
  const router = Router();

  router.post('/customers/:id/payment-methods', async (req, res) => {
    const tenant = tenantOf(res);
    const row = await createPaymentMethod(db, boss, tenant, secrets, gatewayFor(deps, tenant)?.(db), req.params.id!, req.body);
    res.status(201).json({ data: paymentMethodToApi(row) });
  });

  router.get('/customers/:id/payment-methods', async (req, res) => {
    const tenant = tenantOf(res);
    const customerId = await customerIdOf(db, tenant, req.params.id!);
    const page = pageRequest(req);
    const query = paymentMethodRepo(db, tenant).ofCustomer(customerId);
    const { total, rows } = await paginate<PaymentMethodRow>(query, page, PAYMENT_METHOD_COLUMNS, PAYMENT_METHODS);
    res.json(envelope(req, page, total, rows, rows.map((row) => paymentMethodToApi(row))));
  });

  router.get('/payment-methods/:id', async (req, res) => {
    res.json({ data: paymentMethodToApi(await findPaymentMethod(db, tenantOf(res), req.params.id!)) });
  });

  router.put('/payment-methods/:id', async (req, res) => {
    res.json({ data: paymentMethodToApi(await updatePaymentMethod(db, boss, tenantOf(res), req.params.id!, req.body)) });
  });

  router.delete('/payment-methods/:id', async (req, res) => {
    await deletePaymentMethod(db, boss, tenantOf(res), req.params.id!);
    res.json({ success: true });
  });

  return router;
}
