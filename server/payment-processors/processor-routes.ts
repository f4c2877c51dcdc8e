import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import type { TypedRoutes } from '../http/typed-routes';
import { paymentProcessorService } from './processor-service';

export function paymentProcessorRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const processors = paymentProcessorService(deps);

  routes.get('/payment-processor', async (_req, res) => {
    res.json({ data: await processors.get(tenantOf(res)) });
  });

  routes.put('/payment-processor', async (req, res) => {
    res.json({ data: await processors.set(tenantOf(res), req.body) });
  });
}
