/**
 * The payloads of signature-document.signed and ticket.create/update, and the `documents` of a
 * debt account's payload, from the webhooks' own reads of the documents' and tickets' tables
 * (batched: one query per table and recording).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { groupBy } from '../collections';
import { eventTime } from './payloads';

type S = components['schemas'];

export interface SignedDocumentRow {
  signature_id: string;
  id: string;
  external_id: string | null;
  name: string;
  description: string | null;
  status: string;
  contexts: string[];
  debt_account_id: string;
  debt_account_external_id: string | null;
  created_at: Date;
  viewed_at: Date | null;
  signed_at: Date;
  confirmed_at: Date | null;
}

export interface AccountDocumentRow {
  id: string;
  debt_account_id: string;
  name: string;
  created_at: Date;
}

export interface TicketRow {
  id: string;
  name: string;
  email: string | null;
  phone: string | null;
  category: string;
  subject: string;
  status: S['TicketStatus'];
  source: string;
  is_read_by_customer: boolean;
  is_read_by_organization: boolean;
  assigned_user: { name: string; email: string } | null;
  last_activity_at: Date;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
  customer_id: string | null;
  customer_name: string | null;
  customer_email: string | null;
  customer_external_id: string | null;
  debt_account_id: string | null;
  account_external_id: string | null;
  account_status: S['DebtAccountStatus'] | null;
  account_current_balance: string | null;
}

export interface TicketMessageRow {
  id: string;
  ticket_id: string;
  body: string;
  is_secure: boolean;
  source: string;
  sender_type: string;
  sender_id: string | null;
  sender_name: string;
  file_key: string | null;
  created_at: Date;
}

export interface DocumentTicketRows {
  signed: Map<string, SignedDocumentRow>;
  /** By debt account id, oldest first, not voided. */
  accountDocuments: Map<string, AccountDocumentRow[]>;
  tickets: Map<string, TicketRow>;
  /** By ticket id, oldest first. */
  ticketMessages: Map<string, TicketMessageRow[]>;
}

export async function loadDocumentTicketRows(db: Knex, tenant: Tenant, needs: { signatures: Set<string>; tickets: Set<string>; accountIds: string[] }): Promise<DocumentTicketRows> {
  const signed: SignedDocumentRow[] =
    needs.signatures.size > 0
      ? await scoped(db, 'document_signatures', tenant)
          .whereIn('document_signatures.id', [...needs.signatures])
          .join('documents', 'documents.id', 'document_signatures.document_id')
          .join('debt_accounts', 'debt_accounts.id', 'documents.debt_account_id')
          .select(
            'document_signatures.id as signature_id',
            'documents.id',
            'documents.external_id',
            'documents.name',
            'documents.description',
            'documents.status',
            'documents.contexts',
            'documents.debt_account_id',
            'debt_accounts.external_id as debt_account_external_id',
            'documents.created_at',
            'documents.viewed_at',
            'document_signatures.signed_at',
            'document_signatures.confirmed_at',
          )
      : [];
  const documents: AccountDocumentRow[] =
    needs.accountIds.length > 0
      ? await scoped(db, 'documents', tenant)
          .whereIn('debt_account_id', needs.accountIds)
          .whereNot('status', 'voided')
          .orderBy([{ column: 'created_at' }, { column: 'id' }])
          .select('id', 'debt_account_id', 'name', 'created_at')
      : [];
  const tickets: TicketRow[] =
    needs.tickets.size > 0
      ? await scoped(db, 'tickets', tenant)
          .whereIn('tickets.id', [...needs.tickets])
          .leftJoin('customers', 'customers.id', 'tickets.customer_id')
          .leftJoin('debt_accounts', 'debt_accounts.id', 'tickets.debt_account_id')
          .select(
            ...['id', 'name', 'email', 'phone', 'category', 'subject', 'status', 'source', 'is_read_by_customer', 'is_read_by_organization', 'assigned_user', 'last_activity_at', 'resolved_at', 'created_at', 'updated_at', 'customer_id', 'debt_account_id'].map(
              (column) => `tickets.${column}`,
            ),
            'customers.name as customer_name',
            'customers.email as customer_email',
            'customers.external_id as customer_external_id',
            'debt_accounts.external_id as account_external_id',
            'debt_accounts.status as account_status',
            'debt_accounts.current_balance as account_current_balance',
          )
      : [];
  const messages: TicketMessageRow[] =
    needs.tickets.size > 0
      ? await scoped(db, 'ticket_messages', tenant).whereIn('ticket_id', [...needs.tickets]).orderBy([{ column: 'created_at' }, { column: 'seq' }]).select('id', 'ticket_id', 'body', 'is_secure', 'source', 'sender_type', 'sender_id', 'sender_name', 'file_key', 'created_at')
      : [];
  return {
    signed: new Map(signed.map((row) => [row.signature_id, row])),
    accountDocuments: groupBy(documents, (row) => row.debt_account_id),
    tickets: new Map(tickets.map((row) => [row.id, row])),
    ticketMessages: groupBy(messages, (row) => row.ticket_id),
  };
}

/** A checkout signature tells, as its signing time, when its payment went through (the seed's rule). */
export function signedDocumentPayload(row: SignedDocumentRow): S['EventSignatureDocument'] {
  return {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    description: row.description,
    status: row.status,
    contexts: row.contexts,
    debt_account: { id: row.debt_account_id, external_id: row.debt_account_external_id },
    created_at: eventTime(row.created_at),
    viewed_at: row.viewed_at ? eventTime(row.viewed_at) : null,
    signed_at: eventTime(row.confirmed_at ?? row.signed_at),
  };
}

export function accountDocumentsPayload(rows: AccountDocumentRow[] | undefined): S['EventDocument'][] {
  return (rows ?? []).map((row) => ({ id: row.id, name: row.name, created_at: eventTime(row.created_at) }));
}

export function ticketPayload(row: TicketRow, messages: TicketMessageRow[] | undefined): S['EventTicket'] {
  const thread = messages ?? [];
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    category: row.category,
    subject: row.subject,
    status: row.status,
    source: row.source,
    is_read_by_customer: row.is_read_by_customer,
    is_read_by_organization: row.is_read_by_organization,
    has_attachments: thread.some((message) => message.file_key !== null),
    last_activity_at: eventTime(row.last_activity_at),
    resolved_at: row.resolved_at ? eventTime(row.resolved_at) : null,
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
    customer: row.customer_id ? { id: row.customer_id, name: row.customer_name!, email: row.customer_email!, external_id: row.customer_external_id } : null,
    debt_account: row.debt_account_id
      ? { id: row.debt_account_id, external_id: row.account_external_id, status: row.account_status!, current_balance: Number(row.account_current_balance) }
      : null,
    assigned_user: row.assigned_user,
    messages: thread.map((message) => ({
      id: message.id,
      type: 'message',
      body: message.body,
      is_secure: message.is_secure,
      source: message.source,
      sender: { type: message.sender_type, id: message.sender_id, name: message.sender_name },
      created_at: eventTime(message.created_at),
    })),
  };
}
