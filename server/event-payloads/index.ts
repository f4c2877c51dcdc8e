/**
 * What an event says about its record: the one entry of this room. The webhooks' outbox hands
 * it the events a service recorded and gets back each one's payload (`data`); how the payload
 * is stored, signed and delivered is the webhooks' business, and nothing here knows of it.
 *
 * Inside: event-kinds.ts says what each event needs loaded and how its payload is built;
 * payload-reads.ts (with payment-, settlement-, dispute-, document-ticket-reads.ts and
 * tracking-payloads.ts) loads those rows with this room's own queries, one per table whatever
 * the number of events, on the recording transaction; payloads.ts and its neighbours build the
 * documented Event* objects, each part of one record built once per recording (built-once.ts).
 */
import type { Knex } from 'knex';
import type { EventName, RecordedEvent } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import { kindOf } from './event-kinds';
import { loadPayloadRows, noNeeds } from './payload-reads';

/** One event's payload: its name, the record it is about (the id it was recorded with), and `data`. */
export interface EventPayload {
  name: EventName;
  objectId: string;
  data: object;
}

/**
 * The payloads of `recorded`, in their order (event by event, id by id), read on `trx` so that
 * each shows its record as the transaction leaves it. An id whose record is gone (or an account
 * without a plan, for a plan's event) has nothing to tell and yields no payload.
 */
export async function eventPayloads(trx: Knex.Transaction, tenant: Tenant, recorded: RecordedEvent[]): Promise<EventPayload[]> {
  const needs = noNeeds();
  for (const event of recorded) for (const id of event.ids) kindOf(event.name).need(needs, id);
  const rows = await loadPayloadRows(trx, tenant, needs);
  const payloads: EventPayload[] = [];
  for (const event of recorded) {
    const kind = kindOf(event.name);
    for (const id of event.ids) {
      const data = kind.build(id, rows, tenant);
      if (data) payloads.push({ name: event.name, objectId: id, data });
    }
  }
  return payloads;
}
