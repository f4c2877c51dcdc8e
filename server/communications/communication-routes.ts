import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import type { CommunicationFilters } from './communication-repo';
import { communicationService } from './communication-service';

export function communicationRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const communications = communicationService(deps.db);

  routes.get('/communications', async (req, res) => {
    const page = pageRequest(req);
    const { customer_id, debt_account_id, kind, status } = req.query;
    // The validator has held kind and status to their lists (422 otherwise).
    const filters = { customer_id, debt_account_id, kind: kind as CommunicationFilters['kind'], status: status as CommunicationFilters['status'] };
    const { total, rows, data } = await communications.list(tenantOf(res), filters, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/communications/{id}', async (req, res) => {
    res.json({ data: await communications.find(tenantOf(res), req.params.id) });
  });

  routes.get('/email-opt-outs', async (req, res) => {
    // The validator has required it (422 otherwise).
    res.json({ data: await communications.optOutHistory(tenantOf(res), req.query.email!) });
  });
}
