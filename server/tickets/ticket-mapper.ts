/** The one place where a ticket's rows become the API's Ticket and TicketSummary. */
import type { components } from '../../generated/schema';
import type { MessageRow, TicketRow } from './ticket-repo';

type S = components['schemas'];

export function messageToApi(row: MessageRow): S['TicketMessage'] {
  return {
    id: row.id,
    type: 'message',
    body: row.body,
    is_secure: row.is_secure,
    source: row.source,
    sender: { type: row.sender_type, id: row.sender_id, name: row.sender_name },
    has_attachment: row.file_key !== null,
    created_at: row.created_at.toISOString(),
  };
}

export function ticketSummaryToApi(row: TicketRow, hasAttachments: boolean): S['TicketSummary'] {
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
    has_attachments: hasAttachments,
    last_activity_at: row.last_activity_at.toISOString(),
    resolved_at: row.resolved_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    customer: row.customer_id ? { id: row.customer_id, name: row.customer_name!, email: row.customer_email!, external_id: row.customer_external_id } : null,
    debt_account: row.debt_account_id
      ? { id: row.debt_account_id, external_id: row.account_external_id, status: row.account_status!, current_balance: Number(row.account_current_balance) }
      : null,
    assigned_user: row.assigned_user,
  };
}

export function ticketToApi(row: TicketRow, messages: MessageRow[]): S['Ticket'] {
  return { ...ticketSummaryToApi(row, messages.some((message) => message.file_key !== null)), messages: messages.map(messageToApi) };
}
