/**
 * The events port. A service says what happened, in its own transaction, and nothing more:
 * `events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }])`. Who listens,
 * and what a payload holds, is the business of whatever stands behind the port (the webhooks'
 * outbox asks server/event-payloads for the payloads, built from that room's own reads, and
 * writes the event log and outbox in that transaction).
 *
 * Record an event while the records it names are in the state the payload must show: after
 * a create or an update, before a delete.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';

export type EventName = components['schemas']['EventName'];

/**
 * One thing that happened, to the records `ids` name:
 * - `customer.*`: customer ids; `debt-account.*`: debt account ids; `location.*`: location ids;
 * - `payment-plan.*`: the ids of the plans' debt accounts (an account has at most one plan; an
 *   account without a plan yields no event);
 * - `import.complete`: bulk action ids;
 * - `charge.succeeded`, `charge.failed`: charge ids;
 * - `transaction.settled-ach`, `transaction.returned-ach`: transaction ids;
 * - `void.succeeded`, `refund.succeeded`: the id of one transaction the void or refund made
 *   (the payload shows all that it made);
 * - `signature-document.signed`: document signature ids (one document signed in two contexts
 *   has two);
 * - `ticket.create`, `ticket.update`: ticket ids;
 * - tracking events (`customer.document.signed`, …): Portal activity row ids.
 */
export interface RecordedEvent {
  name: EventName;
  ids: string[];
}

export interface EventRecorder {
  record(trx: Knex.Transaction, tenant: Tenant, events: RecordedEvent[]): Promise<void>;
}
