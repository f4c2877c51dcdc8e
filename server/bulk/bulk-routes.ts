import { Router } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../http/auth';
import { envelope, pageRequest } from '../http/pagination';
import { typedRoutes } from '../http/typed-routes';
import { bulkService } from './bulk-service';

export function bulkRouter(deps: AppDeps): Router {
  const bulk = bulkService(deps);
  const router = Router();
  const routes = typedRoutes(router);

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

  return router;
}
