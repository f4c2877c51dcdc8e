import type { RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { createLimiter, rateLimit } from '../http/rate-limit';
import type { TypedRoutes } from '../http/typed-routes';
import { customerSessionService } from './customer-session-service';

export function customerSessionRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const sessions = customerSessionService(deps);

  routes.post('/customer-sessions', async (req, res) => {
    res.status(201).json({ data: await sessions.create(tenantOf(res), req.body) });
  });

  routes.post('/bulk/customer-sessions', async (req, res) => {
    res.status(201).json({ data: await sessions.createMany(tenantOf(res), req.body) });
  });
}

/**
 * Bulk sessions' own limit (BULK_SESSION_RATE_LIMIT_PER_MINUTE per token), beside the
 * general one. It must run before the request is validated, because an invalid request
 * counts too (the document's rule): the app mounts it ahead of its validator.
 */
export function bulkCustomerSessionThrottle({ db, config }: Pick<AppDeps, 'db' | 'config'>): RequestHandler {
  const limiter = createLimiter(db, { points: config.bulkSessionRateLimitPerMinute, durationSeconds: 60, keyPrefix: 'bulk-sessions' });
  return rateLimit(limiter, 'bulk session requests');
}
