import { Router } from 'express';
import type { AppDeps } from '../app';
import { tenantOf } from '../http/auth';
import { createSession, createSessions } from './session-service';

export function customerSessionRouter(deps: AppDeps): Router {
  const router = Router();

  router.post('/customer-sessions', async (req, res) => {
    res.status(201).json({ data: await createSession(deps, tenantOf(res), req.body) });
  });

  // Its own throttle runs in app.ts, before validation, beside the general limit.
  router.post('/bulk/customer-sessions', async (req, res) => {
    res.status(201).json({ data: await createSessions(deps, tenantOf(res), req.body) });
  });

  return router;
}
