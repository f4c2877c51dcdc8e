import type { Response } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { uploadedFile } from '../http/uploads';
import { sendStoredFile } from '../http/file-download';
import { documentService, type DocumentFilters, type DocumentForm } from './document-service';

export function documentRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const documents = documentService(deps);

  routes.post('/debt-accounts/{id}/documents', async (req, res) => {
    const form = req.body as unknown as DocumentForm;
    res.status(201).json({ data: await documents.create(tenantOf(res), req.params.id, form, uploadedFile(req)) });
  });

  routes.get('/documents', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await documents.list(tenantOf(res), page, req.query as DocumentFilters);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/documents/{id}', async (req, res) => {
    res.json({ data: await documents.find(tenantOf(res), req.params.id) });
  });

  routes.delete('/documents/{id}', async (req, res) => {
    await documents.remove(tenantOf(res), req.params.id);
    res.json({ success: true });
  });

  routes.get('/documents/{id}/file', async (req, res) => {
    const file = await documents.file(tenantOf(res), req.params.id);
    sendStoredFile(res as unknown as Response, file, `document-${file.id}.pdf`);
  });
}
