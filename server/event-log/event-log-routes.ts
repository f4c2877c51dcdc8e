import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { eventLogService } from './event-log-service';
import { envelopeRoom, eventPageBytes } from './event-page';

export function eventLogRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const events = eventLogService(deps);

  // Written as bytes: the payloads go in as stored (event-page.ts).
  routes.get('/events', async (req, res) => {
    const page = pageRequest(req);
    const read = await events.page(tenantOf(res), req.query, page, envelopeRoom(req, page));
    // The bytes of the answer this route's type describes (the document's schema), assembled by eventPageBytes.
    res.type('application/json').end(eventPageBytes(req, page, read));
  });

  routes.get('/events/{id}', async (req, res) => {
    res.json({ data: await events.find(tenantOf(res), req.params.id) });
  });
}
