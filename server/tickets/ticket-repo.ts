/** The SQL of tickets and their messages; every query scoped to the tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, UUID } from '../db/tenant';

type S = components['schemas'];

export const TICKETS = 'tickets';
export const MESSAGES = 'ticket_messages';

/** A ticket with what it shows of its customer and account. */
export const TICKET_COLUMNS = [
  ...[
    'id',
    'customer_id',
    'debt_account_id',
    'name',
    'email',
    'phone',
    'category',
    'subject',
    'status',
    'source',
    'is_read_by_customer',
    'is_read_by_organization',
    'assigned_user',
    'last_activity_at',
    'resolved_at',
    'created_at',
    'updated_at',
  ].map((column) => `${TICKETS}.${column}`),
  'customers.name as customer_name',
  'customers.email as customer_email',
  'customers.external_id as customer_external_id',
  'debt_accounts.external_id as account_external_id',
  'debt_accounts.status as account_status',
  'debt_accounts.current_balance as account_current_balance',
];

export interface TicketRow {
  id: string;
  customer_id: string | null;
  debt_account_id: string | null;
  name: string;
  email: string | null;
  phone: string | null;
  category: string;
  subject: string;
  status: S['TicketStatus'];
  source: S['TicketSource'];
  is_read_by_customer: boolean;
  is_read_by_organization: boolean;
  assigned_user: S['TicketAssignedUser'] | null;
  last_activity_at: Date;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
  customer_name: string | null;
  customer_email: string | null;
  customer_external_id: string | null;
  account_external_id: string | null;
  account_status: S['DebtAccountStatus'] | null;
  account_current_balance: string | null;
}

const MESSAGE_COLUMNS = ['id', 'ticket_id', 'body', 'is_secure', 'source', 'sender_type', 'sender_id', 'sender_name', 'file_key', 'file_type', 'created_at'];

export interface MessageRow {
  id: string;
  ticket_id: string;
  body: string;
  is_secure: boolean;
  source: 'portal' | 'api';
  sender_type: 'customer' | 'guest' | 'user';
  sender_id: string | null;
  sender_name: string;
  file_key: string | null;
  file_type: string | null;
  created_at: Date;
}

export type TicketValues = Pick<TicketRow, 'customer_id' | 'debt_account_id' | 'name' | 'email' | 'phone' | 'category' | 'subject' | 'status' | 'source' | 'is_read_by_customer' | 'is_read_by_organization' | 'last_activity_at' | 'created_at'>;
export type TicketChanges = Partial<Pick<TicketRow, 'status' | 'resolved_at' | 'assigned_user' | 'is_read_by_customer' | 'is_read_by_organization' | 'last_activity_at' | 'updated_at'>>;

export function ticketRepo(db: Knex, tenant: Tenant) {
  const tickets = () =>
    scoped(db, TICKETS, tenant).leftJoin('customers', 'customers.id', `${TICKETS}.customer_id`).leftJoin('debt_accounts', 'debt_accounts.id', `${TICKETS}.debt_account_id`);
  return {
    query: tickets,

    async find(id: string, { forUpdate = false } = {}): Promise<TicketRow | undefined> {
      // A path that is no UUID names no ticket (the column is uuid: PostgreSQL would refuse the comparison).
      if (!UUID.test(id)) return undefined;
      const query = tickets().where(`${TICKETS}.id`, id).first(TICKET_COLUMNS);
      return (forUpdate ? query.forUpdate(TICKETS) : query) as Promise<TicketRow | undefined>;
    },

    async insert(values: TicketValues): Promise<string> {
      const [row] = await db(TICKETS)
        .insert({ ...tenantColumns(tenant), ...values, updated_at: values.created_at })
        .returning('id');
      return (row as { id: string }).id;
    },

    async update(id: string, changes: TicketChanges): Promise<void> {
      const values: Record<string, unknown> = { ...changes };
      if ('assigned_user' in changes) values.assigned_user = changes.assigned_user === null ? null : JSON.stringify(changes.assigned_user);
      await scoped(db, TICKETS, tenant).where('id', id).update(values);
    },

    async messagesOf(ticketIds: string[]): Promise<MessageRow[]> {
      if (ticketIds.length === 0) return [];
      return scoped(db, MESSAGES, tenant).whereIn('ticket_id', ticketIds).orderBy([{ column: 'created_at' }, { column: 'seq' }]).select(MESSAGE_COLUMNS);
    },

    async insertMessage(values: Omit<MessageRow, 'id'>): Promise<MessageRow> {
      const [row] = await db(MESSAGES).insert({ ...tenantColumns(tenant), ...values }).returning(MESSAGE_COLUMNS);
      return row as MessageRow;
    },

    /** Ticket ids (of `ids`) with at least one attachment. */
    async withAttachments(ids: string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows: { ticket_id: string }[] = await scoped(db, MESSAGES, tenant).whereIn('ticket_id', ids).whereNotNull('file_key').distinct('ticket_id');
      return new Set(rows.map((row) => row.ticket_id));
    },
  };
}
