import type { Response } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { uploadedFile } from '../http/uploads';
import type { DisputeFilters } from '../dispute-store/dispute-repo';
import { addComment, addFile, createDispute, disputeFile, findDispute, listDisputes, updateDispute } from './dispute-service';

/** A name safe inside a quoted header value: printable ASCII without quotes or backslashes. */
const headerName = (name: string) => name.replace(/[^\x20-\x7e]|["\\]/g, '_').slice(0, 200) || 'file';

export function disputeRoutes(routes: TypedRoutes, deps: AppDeps): void {
  routes.post('/debt-accounts/{id}/disputes', async (req, res) => {
    res.status(201).json({ data: await createDispute(deps, tenantOf(res), req.params.id, req.body) });
  });

  routes.get('/disputes', async (req, res) => {
    const page = pageRequest(req);
    const { debt_account_id, customer_id, status } = req.query;
    const filters: DisputeFilters = { debt_account_id, customer_id, status: status as DisputeFilters['status'] };
    const { total, rows, data } = await listDisputes(deps.db, tenantOf(res), filters, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/disputes/{id}', async (req, res) => {
    res.json({ data: await findDispute(deps.db, tenantOf(res), req.params.id) });
  });

  routes.put('/disputes/{id}', async (req, res) => {
    res.json({ data: await updateDispute(deps, tenantOf(res), req.params.id, req.body) });
  });

  routes.post('/disputes/{id}/comments', async (req, res) => {
    res.status(201).json({ data: await addComment(deps, tenantOf(res), req.params.id, req.body) });
  });

  routes.post('/disputes/{id}/files', async (req, res) => {
    res.status(201).json({ data: await addFile(deps, tenantOf(res), req.params.id, uploadedFile(req)) });
  });

  routes.get('/disputes/{id}/files/{fileId}', async (req, res) => {
    const { row, bytes } = await disputeFile(deps, tenantOf(res), req.params.id, req.params.fileId);
    // Bytes, not JSON: always a download, never shown inline, and never sniffed as another type.
    (res as unknown as Response)
      .status(200)
      .type(row.content_type)
      .set('Content-Disposition', `attachment; filename="${headerName(row.name)}"`)
      .set('X-Content-Type-Options', 'nosniff')
      .send(bytes);
  });
}
