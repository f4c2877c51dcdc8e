/**
 * The webhooks' side of the events port. For the events a service records, in its
 * transaction: the tenant's subscriptions are read once per transaction; events that no
 * webhook of the tenant subscribes to are dropped before anything is loaded or written (the
 * same for the API and bulk import); the payloads of the rest are built from one batched
 * read; then the outbox rows, one delivery per subscribed webhook and event, and each
 * delivery's first attempt are written, committing or rolling back with the change.
 */
import type { Knex } from 'knex';
import type { EventRecorder, RecordedEvent } from '../events/events';
import type { Tenant } from '../http/auth';
import { enqueueManyIn, type Boss } from '../jobs/queue';
import { deliveryJob } from './delivery-jobs';
import { kindOf } from './event-kinds';
import { loadPayloadRows, noNeeds } from './payload-reads';
import { webhookRepo, type EventName } from './webhook-repo';

/** One read of the subscriptions per transaction, however many times it records. */
const subscriptions = new WeakMap<Knex.Transaction, Promise<Set<string>>>();

function subscribedIn(trx: Knex.Transaction, tenant: Tenant): Promise<Set<string>> {
  let subscribed = subscriptions.get(trx);
  if (!subscribed) {
    subscribed = webhookRepo(trx, tenant).subscribedEvents();
    subscriptions.set(trx, subscribed);
  }
  return subscribed;
}

export function webhookEvents(boss: Boss): EventRecorder {
  return {
    async record(trx: Knex.Transaction, tenant: Tenant, recorded: RecordedEvent[]): Promise<void> {
      if (!recorded.some((event) => event.ids.length > 0)) return;
      const subscribed = await subscribedIn(trx, tenant);
      const wanted = recorded.filter((event) => subscribed.has(event.name) && event.ids.length > 0);
      if (wanted.length === 0) return;

      const needs = noNeeds();
      for (const event of wanted) for (const id of event.ids) kindOf(event.name).need(needs, id);
      const rows = await loadPayloadRows(trx, tenant, needs);
      const events: { name: EventName; data: object }[] = [];
      for (const event of wanted) {
        for (const id of event.ids) {
          const data = kindOf(event.name).build(id, rows);
          if (data) events.push({ name: event.name, data });
        }
      }
      if (events.length === 0) return;
      const deliveryIds = await webhookRepo(trx, tenant).insertEvents(events);
      await enqueueManyIn(boss, trx, deliveryIds.map((deliveryId) => deliveryJob({ deliveryId, attempt: 1 })));
    },
  };
}
