import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { bulkService } from './bulk-service';

export function bulkRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const bulk = bulkService(deps);

  routes.post('/bulk', async (req, res) => {
    res.status(201).json({ data: await bulk.create(tenantOf(res), req.body) });
  });

  routes.get('/bulk/{id}', async (req, res) => {
    res.json({ data: await bulk.progress(tenantOf(res), req.params.id) });
  });

  routes.get('/bulk/{id}/errors', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await bulk.failedRows(tenantOf(res), req.params.id, page);
    res.json(envelope(req, page, total, rows, data));
  });
}
