/**
 * The webhooks' side of the events port. For the events a service records, in its
 * transaction: the payloads are built from one batched read (server/event-payloads, this
 * room's one way into that one); then every event is written to
 * the event log (GET /events, recovery), whether or not a webhook subscribes, and one delivery
 * per enabled webhook subscribed to it, with each delivery's first attempt, all committing or
 * rolling back with the change. The subscriptions are read once per transaction: events that
 * no webhook wants enqueue nothing.
 */
import type { Knex } from 'knex';
import type { EventRecorder, RecordedEvent } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { enqueueManyIn, type Boss } from '../jobs/queue';
import { nowFor } from '../kernel/clock';
import { deliveryJob } from './delivery-jobs';
import { eventPayloads } from '../event-payloads';
import { webhookRepo } from './webhook-repo';

export function webhookEvents(boss: Boss, clock: () => Date = () => new Date()): EventRecorder {
  return {
    async record(trx: Knex.Transaction, tenant: Tenant, recorded: RecordedEvent[]): Promise<void> {
      const wanted = recorded.filter((event) => event.ids.length > 0);
      if (wanted.length === 0) return;

      const events = await eventPayloads(trx, tenant, wanted);
      if (events.length === 0) return;
      const deliveries = await webhookRepo(trx, tenant).insertEvents(events, nowFor(clock, tenant));
      // A slow webhook's attempts go behind the others' (delivery-lanes.ts).
      await enqueueManyIn(boss, trx, deliveries.map(({ id, webhookId, slow }) => deliveryJob({ deliveryId: id, attempt: 1, webhookId }, 0, slow)));
    },
  };
}
