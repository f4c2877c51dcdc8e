import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { locationService } from './location-service';

export function locationRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const locations = locationService(deps);

  routes.post('/locations', async (req, res) => {
    res.status(201).json({ data: await locations.create(tenantOf(res), req.body) });
  });

  routes.get('/locations', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await locations.list(tenantOf(res), page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/locations/{id}', async (req, res) => {
    res.json({ data: await locations.find(tenantOf(res), req.params.id) });
  });

  routes.put('/locations/{id}', async (req, res) => {
    res.json({ data: await locations.update(tenantOf(res), req.params.id, req.body) });
  });

  routes.delete('/locations/{id}', async (req, res) => {
    await locations.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}
