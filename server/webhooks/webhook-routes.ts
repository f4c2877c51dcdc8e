import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { ApiError } from '../http/errors';
import { envelope, pageRequest, paginate } from '../http/pagination';
import { deliveryToApi } from './webhook-mapper';
import { DELIVERIES, DELIVERY_COLUMNS, webhookRepo, type DeliveryRow } from './webhook-repo';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  redeliver,
  triggerWebhooks,
  updateWebhook,
} from './webhook-service';

export function webhookRouter(deps: AppDeps): Router {
  const { db, boss } = deps;
  const router = Router();

  router.post('/webhooks', async (req, res) => {
    res.status(201).json({ data: await createWebhook(deps, tenantOf(res), req.body) });
  });

  router.get('/webhooks', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await listWebhooks(db, tenantOf(res), page);
    res.json(envelope(req, page, total, rows, data));
  });

  // The trigger paths come before /webhooks/:id so that "trigger" is never taken for an id.
  router.post('/webhooks/trigger', async (req, res) => {
    res.json(await triggerWebhooks(deps, tenantOf(res), req.body.events));
  });

  router.post('/webhooks/trigger/:webhook_uuid', async (req, res) => {
    res.json(await triggerWebhooks(deps, tenantOf(res), req.body.events, req.params.webhook_uuid!));
  });

  router.get('/webhooks/:id', async (req, res) => {
    res.json({ data: await findWebhook(db, tenantOf(res), req.params.id!) });
  });

  router.put('/webhooks/:id', async (req, res) => {
    res.json({ data: await updateWebhook(deps, tenantOf(res), req.params.id!, req.body) });
  });

  router.delete('/webhooks/:id', async (req, res) => {
    await deleteWebhook(db, tenantOf(res), req.params.id!);
    res.json({ success: true });
  });

  router.get('/webhooks/:id/deliveries', async (req, res) => {
    const tenant = tenantOf(res);
    const repo = webhookRepo(db, tenant);
    if (!(await repo.find(req.params.id!))) throw ApiError.notFound('Webhook');
    const page = pageRequest(req);
    const { total, rows } = await paginate<DeliveryRow>(repo.deliveries(req.params.id!), page, DELIVERY_COLUMNS, DELIVERIES, 'desc');
    res.json(envelope(req, page, total, rows, rows.map(deliveryToApi)));
  });

  router.post('/webhooks/:id/deliveries/:delivery_id/redeliver', async (req, res) => {
    res.json({ data: await redeliver(db, tenantOf(res), boss, req.params.id!, req.params.delivery_id!) });
  });

  return router;
}
