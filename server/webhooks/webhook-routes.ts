import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { recoveryService } from './recovery';
import { webhookService } from './webhook-service';

export function webhookRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const webhooks = webhookService(deps);
  const recoveries = recoveryService(deps);

  routes.post('/webhooks', async (req, res) => {
    res.status(201).json({ data: await webhooks.create(tenantOf(res), req.body) });
  });

  routes.get('/webhooks', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await webhooks.list(tenantOf(res), page);
    res.json(envelope(req, page, total, rows, data));
  });

  // The trigger paths come before /webhooks/{id} so that "trigger" is never taken for an id.
  routes.post('/webhooks/trigger', async (req, res) => {
    res.json(await webhooks.trigger(tenantOf(res), req.body.events));
  });

  routes.post('/webhooks/trigger/{webhook_uuid}', async (req, res) => {
    res.json(await webhooks.trigger(tenantOf(res), req.body.events, req.params.webhook_uuid));
  });

  routes.get('/webhooks/{id}', async (req, res) => {
    res.json({ data: await webhooks.find(tenantOf(res), req.params.id) });
  });

  routes.put('/webhooks/{id}', async (req, res) => {
    res.json({ data: await webhooks.update(tenantOf(res), req.params.id, req.body) });
  });

  routes.delete('/webhooks/{id}', async (req, res) => {
    await webhooks.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });

  routes.get('/webhooks/{id}/deliveries', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await webhooks.deliveries(tenantOf(res), req.params.id, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.post('/webhooks/{id}/deliveries/{delivery_id}/redeliver', async (req, res) => {
    res.json({ data: await webhooks.redeliver(tenantOf(res), req.params.id, req.params.delivery_id) });
  });

  routes.post('/webhooks/{id}/rotate-secret', async (req, res) => {
    res.json({ data: await webhooks.rotateSecret(tenantOf(res), req.params.id, req.body ?? {}) });
  });

  routes.post('/webhooks/{id}/recover', async (req, res) => {
    res.status(202).json({ data: await recoveries.start(tenantOf(res), req.params.id, req.body) });
  });

  routes.get('/webhooks/{id}/recoveries/{task_id}', async (req, res) => {
    res.json({ data: await recoveries.find(tenantOf(res), req.params.id, req.params.task_id) });
  });
}
