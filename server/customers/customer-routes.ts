import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { ApiError } from '../http/errors';
import { parseInclude } from '../http/include';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { addressRepo } from './address-repo';
import { addAddress, changeAddress, removeAddress } from './address-service';
import { emitEvents } from '../webhooks/emit';
import { customerEvents } from '../webhooks/resource-events';
import { addressToApi, createdCustomerToApi } from './customer-mapper';
import { CUSTOMER_COLUMNS, CUSTOMERS, customerRepo, type CustomerRow } from './customer-repo';
import {
  createCustomer,
  CUSTOMER_INCLUDES,
  DEFAULT_CUSTOMER_INCLUDES,
  deleteCustomer,
  findCustomer,
  loadCustomers,
  updateCustomer,
} from './customer-service';

const include = (raw: unknown) => parseInclude(raw, CUSTOMER_INCLUDES, DEFAULT_CUSTOMER_INCLUDES);

export function customerRouter({ db, boss }: AppDeps): Router {
  const router = Router();

  router.post('/customers', async (req, res) => {
    const customer = await createCustomer(db, boss, tenantOf(res), req.body, include(req.query.include));
    res.status(201).json({ data: createdCustomerToApi(customer) });
  });

  router.get('/customers', async (req, res) => {
    const tenant = tenantOf(res);
    const page = pageRequest(req);
    const { total, rows } = await paginate<CustomerRow>(customerRepo(db, tenant).query(), page, CUSTOMER_COLUMNS, CUSTOMERS);
    res.json(envelope(req, page, total, rows, await loadCustomers(db, tenant, rows, include(req.query.include))));
  });

  router.get('/customers/:id', async (req, res) => {
    res.json({ data: await findCustomer(db, tenantOf(res), req.params.id!, include(req.query.include)) });
  });

  router.put('/customers/:id', async (req, res) => {
    res.json({ data: await updateCustomer(db, boss, tenantOf(res), req.params.id!, req.body, include(req.query.include)) });
  });

  router.delete('/customers/:id', async (req, res) => {
    await deleteCustomer(db, boss, tenantOf(res), req.params.id!);
    res.json({ success: true });
  });

  return router;
}

/**
 * Address operations lock the customer's row, so one customer's address changes queue up.
 * Each one changes the customer's payload (its addresses), so it emits customer.update.
 */
export function addressRouter({ db, boss }: AppDeps): Router {
  const router = Router();
  const customerChanged = async (trx: Parameters<typeof emitEvents>[0], res: Parameters<typeof tenantOf>[0], customerId: string) =>
    emitEvents(trx, tenantOf(res), boss, await customerEvents(trx, tenantOf(res), 'customer.update', [customerId]));

  const lockedCustomer = async (trx: typeof db, res: Parameters<typeof tenantOf>[0], key: string) => {
    const customer = await customerRepo(trx, tenantOf(res)).find(key, { forUpdate: true });
    if (!customer) throw ApiError.notFound('Customer');
    return customer;
  };

  router.post('/customers/:id/addresses', async (req, res) => {
    const address = await db.transaction(async (trx) => {
      const customer = await lockedCustomer(trx, res, req.params.id!);
      const added = await addAddress(trx, tenantOf(res), customer.id, req.body);
      await customerChanged(trx, res, customer.id);
      return added;
    });
    res.status(201).json({ data: addressToApi(address) });
  });

  router.get('/customers/:id/addresses', async (req, res) => {
    const tenant = tenantOf(res);
    const customer = await customerRepo(db, tenant).find(req.params.id!);
    if (!customer) throw ApiError.notFound('Customer');
    res.json({ data: (await addressRepo(db, tenant).forCustomers([customer.id])).map(addressToApi) });
  });

  router.put('/customers/:id/addresses/:addressId', async (req, res) => {
    const address = await db.transaction(async (trx) => {
      const customer = await lockedCustomer(trx, res, req.params.id!);
      const current = await addressRepo(trx, tenantOf(res)).find(customer.id, req.params.addressId!);
      if (!current) throw ApiError.notFound('Address');
      const changed = await changeAddress(trx, tenantOf(res), current, req.body);
      await customerChanged(trx, res, customer.id);
      return changed;
    });
    res.json({ data: addressToApi(address) });
  });

  router.delete('/customers/:id/addresses/:addressId', async (req, res) => {
    await db.transaction(async (trx) => {
      const customer = await lockedCustomer(trx, res, req.params.id!);
      const current = await addressRepo(trx, tenantOf(res)).find(customer.id, req.params.addressId!);
      if (!current) throw ApiError.notFound('Address');
      await removeAddress(trx, tenantOf(res), current);
      await customerChanged(trx, res, customer.id);
    });
    res.json({ success: true });
  });

  return router;
}
