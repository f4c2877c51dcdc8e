/**
 * The organization's side of tickets: list them as Tratta does, read a thread, reply (the
 * customer is told by e-mail, ticket-reply-mail.ts), assign, change the status, mark read.
 * Every change fires `ticket.update` in its own transaction.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { nowFor } from '../kernel/clock';
import { ApiError } from '../kernel/errors';
import { checkFile, type Upload } from '../files/file-types';
import type { PageRequest } from '../http/pagination';
import { paginate } from '../http/pagination';
import { readSettings } from '../settings/settings-service';
import { ticketSummaryToApi, ticketToApi } from './ticket-mapper';
import { TICKET_COLUMNS, TICKETS, ticketRepo, type TicketChanges, type TicketRow } from './ticket-repo';
import { mailReply } from './ticket-reply-mail';

type S = components['schemas'];

export type TicketDeps = Pick<AppDeps, 'db' | 'events' | 'files' | 'clock' | 'boss' | 'config' | 'secrets'>;

export async function loadTicket(db: Knex, tenant: Tenant, id: string, { forUpdate = false } = {}): Promise<TicketRow> {
  const row = await ticketRepo(db, tenant).find(id, { forUpdate });
  if (!row) throw ApiError.notFound('Ticket');
  return row;
}

export async function ticketOf(db: Knex, tenant: Tenant, id: string): Promise<S['Ticket']> {
  const row = await loadTicket(db, tenant, id);
  return ticketToApi(row, await ticketRepo(db, tenant).messagesOf([row.id]));
}

export interface TicketFilters {
  status?: S['TicketStatus'];
  source?: S['TicketSource'];
  category?: string;
}

async function list({ db }: TicketDeps, tenant: Tenant, page: PageRequest, filters: TicketFilters) {
  const query = ticketRepo(db, tenant).query();
  for (const key of ['status', 'source', 'category'] as const) if (filters[key]) query.where(`${TICKETS}.${key}`, filters[key]);
  // Most recent activity first (Tratta's order); paginate adds the id as the tie-break.
  query.orderBy(`${TICKETS}.last_activity_at`, 'desc');
  const { total, rows } = await paginate<TicketRow>(query, page, TICKET_COLUMNS, TICKETS, 'desc');
  const attached = await ticketRepo(db, tenant).withAttachments(rows.map((row) => row.id));
  return { total, rows, data: rows.map((row) => ticketSummaryToApi(row, attached.has(row.id))) };
}

/** Applies `changes` to a locked ticket, tells it, and answers the ticket as it is now. */
export async function changeTicket(trx: Knex.Transaction, events: AppDeps['events'], tenant: Tenant, row: TicketRow, changes: TicketChanges, now: Date): Promise<S['Ticket']> {
  await ticketRepo(trx, tenant).update(row.id, { ...changes, updated_at: now });
  await events.record(trx, tenant, [{ name: 'ticket.update', ids: [row.id] }]);
  return ticketOf(trx, tenant, row.id);
}

async function reply(deps: TicketDeps, tenant: Tenant, id: string, body: string, upload: Upload | undefined): Promise<S['Ticket']> {
  if (body.trim().length === 0) throw ApiError.field('body', 'must not be only spaces');
  const type = upload ? checkFile(upload, ['application/pdf', 'image/png', 'image/jpeg']) : undefined;
  await loadTicket(deps.db, tenant, id);
  const stored = upload && type ? await deps.files.put(upload.bytes, type) : undefined;
  return deps.db.transaction(async (trx) => {
    const row = await loadTicket(trx, tenant, id, { forUpdate: true });
    const now = nowFor(deps.clock, tenant);
    const settings = await readSettings(trx, tenant);
    await ticketRepo(trx, tenant).insertMessage({
      ticket_id: row.id,
      body,
      // The e-mail carries a link, the Portal the text: only the debtor, signed in, reads it.
      is_secure: true,
      source: 'api',
      sender_type: 'user',
      sender_id: null,
      sender_name: row.assigned_user?.name ?? (settings.organization_name || 'Support'),
      file_key: stored?.key ?? null,
      file_type: stored?.contentType ?? null,
      created_at: now,
    });
    const ticket = await changeTicket(
      trx,
      deps.events,
      tenant,
      row,
      { is_read_by_customer: false, is_read_by_organization: true, last_activity_at: now, ...(row.status === 'open' ? { status: 'in_progress' as const } : {}) },
      now,
    );
    if (row.customer_id) await mailReply(deps, trx, tenant, row, settings.organization_name, now);
    return ticket;
  });
}

async function update(deps: TicketDeps, tenant: Tenant, id: string, body: S['TicketUpdate']): Promise<S['Ticket']> {
  return deps.db.transaction(async (trx) => {
    const row = await loadTicket(trx, tenant, id, { forUpdate: true });
    const now = nowFor(deps.clock, tenant);
    const changes: TicketChanges = {};
    if (body.status !== undefined && body.status !== row.status) {
      changes.status = body.status;
      changes.resolved_at = body.status === 'resolved' ? now : null;
    }
    if (body.assigned_user !== undefined && JSON.stringify(body.assigned_user) !== JSON.stringify(row.assigned_user)) changes.assigned_user = body.assigned_user;
    if (Object.keys(changes).length === 0) return ticketOf(trx, tenant, row.id);
    return changeTicket(trx, deps.events, tenant, row, { ...changes, last_activity_at: now }, now);
  });
}

async function markRead(deps: TicketDeps, tenant: Tenant, id: string): Promise<S['Ticket']> {
  return deps.db.transaction(async (trx) => {
    const row = await loadTicket(trx, tenant, id, { forUpdate: true });
    if (row.is_read_by_organization) return ticketOf(trx, tenant, row.id);
    return changeTicket(trx, deps.events, tenant, row, { is_read_by_organization: true }, nowFor(deps.clock, tenant));
  });
}

/** The name of ours an attachment is served under, by the API and the Portal alike. */
export function attachmentName(messageId: string, contentType: string): string {
  const extension = ({ 'application/pdf': 'pdf', 'image/png': 'png', 'image/jpeg': 'jpg' } as Record<string, string>)[contentType] ?? 'bin';
  return `attachment-${messageId}.${extension}`;
}

async function attachment({ db, files }: TicketDeps, tenant: Tenant, id: string, messageId: string): Promise<{ bytes: Buffer; contentType: string }> {
  const row = await loadTicket(db, tenant, id);
  const message = (await ticketRepo(db, tenant).messagesOf([row.id])).find((item) => item.id === messageId);
  if (!message?.file_key || !message.file_type) throw ApiError.notFound('Attachment');
  return { bytes: await files.read(message.file_key), contentType: message.file_type };
}

export function ticketService(deps: TicketDeps) {
  return {
    list: (tenant: Tenant, page: PageRequest, filters: TicketFilters) => list(deps, tenant, page, filters),
    find: (tenant: Tenant, id: string) => ticketOf(deps.db, tenant, id),
    reply: (tenant: Tenant, id: string, body: string, upload: Upload | undefined) => reply(deps, tenant, id, body, upload),
    update: (tenant: Tenant, id: string, body: S['TicketUpdate']) => update(deps, tenant, id, body),
    markRead: (tenant: Tenant, id: string) => markRead(deps, tenant, id),
    attachment: (tenant: Tenant, id: string, messageId: string) => attachment(deps, tenant, id, messageId),
  };
}
