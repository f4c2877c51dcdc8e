import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import type { TypedRoutes } from '../http/typed-routes';
import { settingsService } from './settings-service';

export function settingsRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const settings = settingsService(deps.db);

  routes.get('/settings', async (_req, res) => {
    res.json({ data: await settings.get(tenantOf(res)) });
  });

  routes.put('/settings', async (req, res) => {
    res.json({ data: await settings.update(tenantOf(res), req.body) });
  });
}
