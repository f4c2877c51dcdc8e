/**
 * The payloads of signature-document.signed and ticket.create/update, and the `documents` of a
 * debt account's payload, from this room's own reads of the documents' and tickets' tables
 * (batched: one query per table and recording).
 */
import type { components } from '../../generated/schema';
import { eventTime } from './event-time';
import type { SignedDocumentRow, AccountDocumentRow, TicketRow, TicketMessageRow } from './document-ticket-reads';

type S = components['schemas'];

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
