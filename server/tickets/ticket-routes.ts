import type { Response } from 'express';
import type { AppDeps } from '../deps';
import { tenantOf } from '../kernel/tenant';
import { envelope, pageRequest } from '../http/pagination';
import type { TypedRoutes } from '../http/typed-routes';
import { uploadedFile } from '../http/uploads';
import { sendStoredFile } from '../http/file-download';
import { CONTACT_REQUEST_CATEGORIES } from './ticket-categories';
import { attachmentName, ticketService, type TicketFilters } from './ticket-service';

/** Tratta's default page of tickets. */
export const TICKETS_PER_PAGE = 15;

export function ticketRoutes(routes: TypedRoutes, deps: AppDeps): void {
  const tickets = ticketService(deps);

  routes.get('/contact-request-categories', async (_req, res) => {
    res.json({ data: CONTACT_REQUEST_CATEGORIES });
  });

  routes.get('/tickets', async (req, res) => {
    const page = { ...pageRequest(req), limit: req.query.limit === undefined ? TICKETS_PER_PAGE : Number(req.query.limit) };
    const { total, rows, data } = await tickets.list(tenantOf(res), page, req.query as TicketFilters);
    res.json(envelope(req, page, total, rows, data));
  });

  routes.get('/tickets/{id}', async (req, res) => {
    res.json({ data: await tickets.find(tenantOf(res), req.params.id) });
  });

  routes.put('/tickets/{id}', async (req, res) => {
    res.json({ data: await tickets.update(tenantOf(res), req.params.id, req.body) });
  });

  routes.post('/tickets/{id}/messages', async (req, res) => {
    res.status(201).json({ data: await tickets.reply(tenantOf(res), req.params.id, req.body.body, uploadedFile(req)) });
  });

  routes.post('/tickets/{id}/read', async (req, res) => {
    res.json({ data: await tickets.markRead(tenantOf(res), req.params.id) });
  });

  routes.get('/tickets/{id}/messages/{messageId}/attachment', async (req, res) => {
    const file = await tickets.attachment(tenantOf(res), req.params.id, req.params.messageId);
    sendStoredFile(res as unknown as Response, file, attachmentName(req.params.messageId, file.contentType));
  });
}
