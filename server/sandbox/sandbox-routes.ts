import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import type { TypedRoutes } from '../http/typed-routes';
import { sandboxService } from './sandbox-service';

export function sandboxRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const sandbox = sandboxService(deps);

  routes.get('/sandbox/clock', async (_req, res) => {
    res.json({ data: await sandbox.read(tenantOf(res)) });
  });

  routes.post('/sandbox/clock', async (req, res) => {
    res.json({ data: await sandbox.advance(tenantOf(res), req.body.advance_to) });
  });
}

