/** The one place where a row of the communications log becomes an API object. */
import type { components } from '../../generated/schema';
import type { CommunicationRow } from './communication-repo';

export function communicationToApi(row: CommunicationRow): components['schemas']['Communication'] {
  return {
    id: row.id,
    customer_id: row.customer_id,
    debt_account_id: row.debt_account_id,
    channel: row.channel,
    kind: row.kind,
    from: row.from,
    reply_to: row.reply_to,
    to: row.to,
    subject: row.subject,
    headers: row.headers,
    text: row.text,
    status: row.status,
    reason: row.reason,
    held_until: row.held_until?.toISOString() ?? null,
    sent_at: row.sent_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
