import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { eventLogService } from './event-log-service';

export function eventLogRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const events = eventLogService(deps);

  routes.get('/events', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await events.list(tenantOf(res), req.query, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/events/{id}', async (req, res) => {
    res.json({ data: await events.find(tenantOf(res), req.params.id) });
  });
}
