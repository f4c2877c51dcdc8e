/**
 * Emission, in one place. Every change that fires events calls `emitEvents` inside its own
 * transaction: the events go to the outbox, each subscribed webhook gets a delivery row, and
 * each delivery's first attempt is enqueued, all committing or rolling back with the change.
 * Cheap for many events at once (bulk import): two statements for the outbox and deliveries,
 * one for the jobs.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../http/auth';
import { enqueueManyIn, type Boss } from '../jobs/queue';
import { deliveryJob } from './delivery-jobs';
import { webhookRepo, type EventName } from './webhook-repo';

export interface WebhookEvent {
  name: EventName;
  /** The payload's `data`, in the shape of the event's schema in the document. */
  data: object;
}

export async function emitEvents(trx: Knex.Transaction, tenant: Tenant, boss: Boss, events: WebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  const deliveryIds = await webhookRepo(trx, tenant).insertEvents(events);
  await enqueueManyIn(boss, trx, deliveryIds.map((deliveryId) => deliveryJob({ deliveryId, attempt: 1 })));
}
