/**
 * The customer's side of tickets, for the Portal: open one (signed in, `collect`; or as a guest,
 * `guest`, with a name, an e-mail address and a phone number), write in its thread, and read it
 * (which clears the unread mark an agent's reply set). Every limit is checked here, each broken
 * one a message on its field, and nothing is written then.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { isCategory } from './ticket-categories';
import { changeTicket, loadTicket } from './ticket-service';
import { TICKET_COLUMNS, ticketRepo, type TicketRow } from './ticket-repo';

export const SUBJECT_MAX = 255;
export const BODY_MAX = 5000;
export const NAME_MAX = 255;
export const EMAIL_MAX = 255;
export const PHONE_MAX = 32;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ().-]{7,32}$/;

type Deps = Pick<AppDeps, 'db' | 'events'>;

export interface Writer {
  /** The signed-in customer; absent for a guest. */
  customerId?: string;
  /** A guest's own name (a customer's is theirs on record). */
  name: string;
}

export interface TicketForm {
  category: string;
  subject: string;
  body: string;
  /** A guest's. */
  name?: string;
  email?: string;
  phone?: string;
}

function textError(value: string | undefined, max: number, what: string): string[] | undefined {
  const text = (value ?? '').trim();
  if (text.length === 0) return [`Enter ${what}.`];
  if (text.length > max) return [`${what[0]!.toUpperCase()}${what.slice(1)} can be at most ${max} characters.`];
  return undefined;
}

export function ticketFormErrors(form: TicketForm, guest: boolean): Record<string, string[]> {
  const errors: Record<string, string[] | undefined> = {
    category: isCategory(form.category) ? undefined : ['Choose what your message is about.'],
    subject: textError(form.subject, SUBJECT_MAX, 'a subject'),
    body: textError(form.body, BODY_MAX, 'your message'),
  };
  if (guest) {
    errors.name = textError(form.name, NAME_MAX, 'your name');
    const email = (form.email ?? '').trim();
    errors.email = EMAIL.test(email) && email.length <= EMAIL_MAX ? undefined : ['Enter an e-mail address such as name@example.com.'];
    errors.phone = PHONE.test((form.phone ?? '').trim()) ? undefined : [`Enter a phone number: digits, spaces, + ( ) - . (7 to ${PHONE_MAX} characters).`];
  }
  return Object.fromEntries(Object.entries(errors).filter((entry): entry is [string, string[]] => entry[1] !== undefined));
}

export interface Opening extends TicketForm {
  customer?: { id: string; name: string; email: string; phone: string | null };
  debtAccountId?: string | null;
  now: Date;
}

/** A new ticket with its first message; `ticket.create` fires once. Answers its id. */
export async function openTicket({ db, events }: Deps, tenant: Tenant, opening: Opening): Promise<string> {
  const guest = !opening.customer;
  const errors = ticketFormErrors(opening, guest);
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return db.transaction(async (trx) => {
    const repo = ticketRepo(trx, tenant);
    const name = opening.customer?.name ?? opening.name!.trim();
    const id = await repo.insert({
      customer_id: opening.customer?.id ?? null,
      debt_account_id: opening.debtAccountId ?? null,
      name,
      email: opening.customer?.email ?? opening.email!.trim(),
      phone: opening.customer ? opening.customer.phone : opening.phone!.trim(),
      category: opening.category,
      subject: opening.subject.trim(),
      status: 'open',
      source: guest ? 'guest' : 'collect',
      is_read_by_customer: true,
      is_read_by_organization: false,
      last_activity_at: opening.now,
      created_at: opening.now,
    });
    await repo.insertMessage({
      ticket_id: id,
      body: opening.body.trim(),
      is_secure: false,
      source: 'portal',
      sender_type: guest ? 'guest' : 'customer',
      sender_id: opening.customer?.id ?? null,
      sender_name: name,
      file_key: null,
      file_type: null,
      created_at: opening.now,
    });
    await events.record(trx, tenant, [{ name: 'ticket.create', ids: [id] }]);
    return id;
  });
}

/** The ticket a writer may see: a customer's own, or the guest ticket this browser opened; anything else a 404. */
export async function ticketOfWriter(db: Knex, tenant: Tenant, id: string, writer: { customerId?: string; guestTicketIds?: string[] }): Promise<TicketRow> {
  const row = await loadTicket(db, tenant, id).catch(() => undefined);
  const mine = row && (writer.customerId ? row.customer_id === writer.customerId : row.source === 'guest' && (writer.guestTicketIds ?? []).includes(row.id));
  if (!row || !mine) throw ApiError.notFound('Ticket');
  return row;
}

/** The customer's (or guest's) message: unread for the organization, and a resolved ticket opens again. */
export async function writeInTicket({ db, events }: Deps, tenant: Tenant, ticket: TicketRow, writer: Writer, body: string, now: Date): Promise<void> {
  const error = textError(body, BODY_MAX, 'your message');
  if (error) throw ApiError.invalid({ body: error });
  await db.transaction(async (trx) => {
    const row = await loadTicket(trx, tenant, ticket.id, { forUpdate: true });
    await ticketRepo(trx, tenant).insertMessage({
      ticket_id: row.id,
      body: body.trim(),
      is_secure: false,
      source: 'portal',
      sender_type: writer.customerId ? 'customer' : 'guest',
      sender_id: writer.customerId ?? null,
      sender_name: writer.name,
      file_key: null,
      file_type: null,
      created_at: now,
    });
    await changeTicket(trx, events, tenant, row, { is_read_by_organization: false, last_activity_at: now, ...(row.status === 'resolved' ? { status: 'open' as const, resolved_at: null } : {}) }, now);
  });
}

/** Opening the ticket's page reads the agent's reply. */
export async function readByCustomer({ db, events }: Deps, tenant: Tenant, ticket: TicketRow, now: Date): Promise<void> {
  if (ticket.is_read_by_customer) return;
  await db.transaction(async (trx) => {
    const row = await loadTicket(trx, tenant, ticket.id, { forUpdate: true });
    if (!row.is_read_by_customer) await changeTicket(trx, events, tenant, row, { is_read_by_customer: true }, now);
  });
}

/** A customer's tickets, most recent activity first: the Portal's home lists them with the unread mark. */
export async function ticketsOfCustomer(db: Knex, tenant: Tenant, customerId: string): Promise<TicketRow[]> {
  return ticketRepo(db, tenant).query().where('tickets.customer_id', customerId).orderBy([{ column: 'tickets.last_activity_at', order: 'desc' }, { column: 'tickets.id', order: 'desc' }]).select(TICKET_COLUMNS);
}
