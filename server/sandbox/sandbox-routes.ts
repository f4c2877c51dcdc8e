import { Router } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../http/auth';
import { typedRoutes } from '../http/typed-routes';
import { sandboxService } from './sandbox-service';

export function sandboxRouter(deps: AppDeps): Router {
  const sandbox = sandboxService(deps);
  const router = Router();
  const routes = typedRoutes(router);

  routes.get('/sandbox/clock', async (_req, res) => {
    res.json({ data: await sandbox.read(tenantOf(res)) });
  });

  routes.post('/sandbox/clock', async (req, res) => {
    res.json({ data: await sandbox.advance(tenantOf(res), req.body.advance_to) });
  });

  return router;
}

