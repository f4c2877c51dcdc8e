/** The one place where webhook and delivery rows become API objects. The secret never leaves. */
import type { components } from '../../generated/schema';
import type { DeliveryRow, WebhookRow } from './webhook-repo';

type S = components['schemas'];

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export function webhookToApi(row: WebhookRow): S['Webhook'] {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    status: row.status,
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    secret_rotated_at: iso(row.secret_rotated_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function deliveryToApi(row: DeliveryRow): S['WebhookDelivery'] {
  return {
    id: row.id,
    event: row.event,
    status: row.delivered_at ? 'delivered' : row.failed_at ? 'failed' : 'pending',
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: iso(row.next_attempt_at),
    delivered_at: iso(row.delivered_at),
    failed_at: iso(row.failed_at),
    created_at: row.created_at.toISOString(),
  };
}
