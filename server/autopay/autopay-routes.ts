import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import type { TypedRoutes } from '../http/typed-routes';
import { autopayService } from './autopay-service';

export function autopayRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const autopay = autopayService(deps);

  routes.delete('/debt-accounts/{id}/autopay', async (req, res) => {
    await autopay.stop(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}
