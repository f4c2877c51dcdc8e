import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { parseInclude } from '../http/include';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { addressService } from './address-service';
import { createdCustomerToApi } from '../customer-store/customer-mapper';
import { CUSTOMER_INCLUDES, customerService, DEFAULT_CUSTOMER_INCLUDES } from './customer-service';

const include = (raw: string | undefined) => parseInclude(raw, CUSTOMER_INCLUDES, DEFAULT_CUSTOMER_INCLUDES);

export function customerRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const customers = customerService(deps);

  routes.post('/customers', async (req, res) => {
    const customer = await customers.create(tenantOf(res), req.body, include(req.query.include));
    res.status(201).json({ data: createdCustomerToApi(customer) });
  });

  routes.get('/customers', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await customers.list(tenantOf(res), page, include(req.query.include));
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/customers/{id}', async (req, res) => {
    res.json({ data: await customers.find(tenantOf(res), req.params.id, include(req.query.include)) });
  });

  routes.put('/customers/{id}', async (req, res) => {
    res.json({ data: await customers.update(tenantOf(res), req.params.id, req.body, include(req.query.include)) });
  });

  routes.delete('/customers/{id}', async (req, res) => {
    await customers.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}

export function addressRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const addresses = addressService(deps);

  routes.post('/customers/{id}/addresses', async (req, res) => {
    res.status(201).json({ data: await addresses.add(tenantOf(res), req.params.id, req.body) });
  });

  routes.get('/customers/{id}/addresses', async (req, res) => {
    res.json({ data: await addresses.list(tenantOf(res), req.params.id) });
  });

  routes.put('/customers/{id}/addresses/{addressId}', async (req, res) => {
    res.json({ data: await addresses.change(tenantOf(res), req.params.id, req.params.addressId, req.body) });
  });

  routes.delete('/customers/{id}/addresses/{addressId}', async (req, res) => {
    await addresses.remove(tenantOf(res), req.params.id, req.params.addressId);
    res.json({ success: true });
  });
}
