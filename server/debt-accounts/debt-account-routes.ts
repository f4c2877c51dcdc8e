import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { parseInclude } from '../http/include';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { DEBT_ACCOUNT_INCLUDES } from './debt-account-loader';
import { debtAccountService } from './debt-account-service';

const include = (raw: string | undefined) => parseInclude(raw, DEBT_ACCOUNT_INCLUDES, DEBT_ACCOUNT_INCLUDES);

export function debtAccountRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const accounts = debtAccountService(deps);

  routes.post('/debt-accounts', async (req, res) => {
    res.status(201).json({ data: await accounts.create(tenantOf(res), req.body, include(req.query.include)) });
  });

  routes.get('/debt-accounts', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await accounts.list(tenantOf(res), page, include(req.query.include));
    res.json(envelope(req, page, total, rows, data));
  });

  // Before /debt-accounts/{id}, which would otherwise take "lookup" for an id.
  routes.get('/debt-accounts/lookup', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await accounts.lookup(tenantOf(res), req.query, page, include(req.query.include));
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/debt-accounts/{id}', async (req, res) => {
    res.json({ data: await accounts.find(tenantOf(res), req.params.id, include(req.query.include)) });
  });

  routes.put('/debt-accounts/{id}', async (req, res) => {
    res.json({ data: await accounts.update(tenantOf(res), req.params.id, req.body, include(req.query.include)) });
  });

  routes.delete('/debt-accounts/{id}', async (req, res) => {
    await accounts.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });
}
