/**
 * What the document and ticket payloads read: signatures, an account's documents, tickets and
 * their threads, loaded once per batch (payload-reads.ts asks; document-ticket-payloads.ts shows).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { groupBy } from '../kernel/collections';

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

