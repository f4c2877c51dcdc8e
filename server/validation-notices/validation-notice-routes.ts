import type { Response } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { sendStoredFile } from '../http/file-download';
import { validationNoticeService } from './validation-notice-service';

/** The HTML notice carries its own inline style sheet; still nothing runs (sandbox, no script). */
const HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

export function validationNoticeRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const notices = validationNoticeService(deps);

  routes.post('/debt-accounts/{id}/validation-notice', async (req, res) => {
    res.status(201).json({ data: await notices.send(tenantOf(res), req.params.id, req.body ?? {}) });
  });

  routes.get('/debt-accounts/{id}/validation-notices', async (req, res) => {
    const page = pageRequest(req);
    const { total, rows, data } = await notices.list(tenantOf(res), req.params.id, page);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/validation-notices/{id}/file', async (req, res) => {
    const format = req.query.format === 'html' ? 'html' : 'pdf';
    const file = await notices.file(tenantOf(res), req.params.id, format);
    sendStoredFile(res as unknown as Response, file, `validation-notice-${file.id}.${format}`, 'attachment', format === 'html' ? HTML_CSP : undefined);
  });
}
