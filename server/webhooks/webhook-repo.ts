/** SQL of the webhook operations, scoped by tenant: subscriptions, the outbox and deliveries as the API sees them. */
import { encodeEventBody } from '../kernel/event-body';
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';

export const WEBHOOKS = 'webhooks';
export const WEBHOOK_EVENTS = 'webhook_events';
export const DELIVERIES = 'webhook_deliveries';

export type EventName = components['schemas']['EventName'];

export const WEBHOOK_COLUMNS = [
  'id',
  'url',
  'events',
  'secret_sealed',
  'status',
  'disabled_reason',
  'disabled_at',
  'secret_rotated_at',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
].map((column) => `${WEBHOOKS}.${column}`);

export type WebhookStatus = 'enabled' | 'disabled';

export interface WebhookRow {
  id: string;
  url: string;
  events: EventName[];
  secret_sealed: string;
  status: WebhookStatus;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret_rotated_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type WebhookValues = Pick<WebhookRow, 'url' | 'events' | 'secret_sealed'>;

/** What an update may change besides url, events and secret (status, rotation's columns). */
export type WebhookChanges = Partial<
  WebhookValues &
    Pick<WebhookRow, 'status' | 'disabled_reason' | 'disabled_at' | 'secret_rotated_at' | 'previous_secret_expires_at'> & {
      previous_secret_sealed: string | null;
      failing_since: Date | null;
      warned_at: Date | null;
    }
>;

/** The unique index behind "not the url of another webhook". */
export const WEBHOOK_URL_UNIQUE = 'webhooks_organization_id_environment_url_unique';

export const DELIVERY_COLUMNS = [
  `${DELIVERIES}.id`,
  `${WEBHOOK_EVENTS}.name as event`,
  `${DELIVERIES}.attempts`,
  `${DELIVERIES}.last_status_code`,
  `${DELIVERIES}.last_error`,
  `${DELIVERIES}.next_attempt_at`,
  `${DELIVERIES}.delivered_at`,
  `${DELIVERIES}.failed_at`,
  `${DELIVERIES}.created_at`,
];

export interface DeliveryRow {
  id: string;
  event: EventName;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
}

export function webhookRepo(db: Knex, tenant: Tenant) {
  const webhooks = () => scoped(db, WEBHOOKS, tenant);
  return {
    /** Oldest first. */
    async list(): Promise<WebhookRow[]> {
      return webhooks().orderBy([{ column: 'created_at' }, { column: 'id' }]).select(WEBHOOK_COLUMNS);
    },

    /** The tenant's webhooks, for paging. */
    query(): Knex.QueryBuilder {
      return webhooks();
    },

    async find(id: string, { forUpdate = false } = {}): Promise<WebhookRow | undefined> {
      const query = webhooks().where('id', id).first(WEBHOOK_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<WebhookRow | undefined>;
    },

    async urlTaken(url: string, exceptId?: string): Promise<boolean> {
      const query = webhooks().where('url', url);
      if (exceptId) query.whereNot('id', exceptId);
      return (await query.first('id')) !== undefined;
    },

    async insert(values: WebhookValues): Promise<WebhookRow> {
      const [row] = await db(WEBHOOKS).insert({ ...values, ...tenantColumns(tenant) }).returning(WEBHOOK_COLUMNS);
      return row as WebhookRow;
    },

    async update(id: string, values: WebhookChanges): Promise<WebhookRow> {
      const [row] = await webhooks().where('id', id).update({ ...values, updated_at: db.fn.now() }).returning(WEBHOOK_COLUMNS);
      return row as WebhookRow;
    },

    async delete(id: string): Promise<void> {
      await webhooks().where('id', id).delete();
    },

    /**
     * The event log and the outbox: every event, and one delivery per enabled webhook
     * subscribed to it, in one statement whatever the number of events. Each delivery carries
     * its event's object and sequence (the order of one object's deliveries). The payload is
     * stored compressed (event-body.ts). Answers the new deliveries' ids, their webhooks, and
     * whether each one's webhook is in the slow lane (delivery-lanes.ts).
     */
    async insertEvents(events: { name: string; objectId: string; data: unknown }[], occurredAt: Date): Promise<{ id: string; webhookId: string; slow: boolean }[]> {
      const { organizationId, environment } = tenant;
      // The stored bodies go as one binary parameter, end to end, each cut out by its start and
      // length: bytes as they are, not base64 inside JSON text that the database decodes again.
      const bodies = events.map((event) => encodeEventBody(event.data));
      const starts: number[] = [];
      let at = 1;
      for (const body of bodies) {
        starts.push(at);
        at += body.length;
      }
      const { rows } = await db.raw<{ rows: { id: string; webhookId: string; slow: boolean }[] }>(
        `WITH inserted AS (
           INSERT INTO ${WEBHOOK_EVENTS} (organization_id, environment, name, object_id, body, occurred_at)
           SELECT ?, ?, input.name, input.object_id, substring(?::bytea FROM input.start FOR input.length), ?
             FROM unnest(?::text[], ?::uuid[], ?::int[], ?::int[]) WITH ORDINALITY AS input(name, object_id, start, length, n)
            ORDER BY input.n
           RETURNING id, name, object_id, sequence
         ), hooks AS (
           SELECT id, events, COALESCE(slow_until > now(), false) AS slow FROM ${WEBHOOKS}
            WHERE organization_id = ? AND environment = ? AND status = 'enabled'
         ), delivered AS (
           INSERT INTO ${DELIVERIES} (webhook_id, event_id, object_id, sequence, next_attempt_at)
           SELECT hooks.id, inserted.id, inserted.object_id, inserted.sequence, now()
             FROM inserted JOIN hooks ON inserted.name = ANY (hooks.events)
            ORDER BY inserted.sequence
           RETURNING id, webhook_id
         )
         SELECT delivered.id, delivered.webhook_id AS "webhookId", hooks.slow FROM delivered JOIN hooks ON hooks.id = delivered.webhook_id`,
        [
          organizationId,
          environment,
          Buffer.concat(bodies),
          occurredAt.toISOString(),
          events.map((event) => event.name),
          events.map((event) => event.objectId),
          starts,
          bodies.map((body) => body.length),
          organizationId,
          environment,
        ],
      );
      return rows;
    },

    /** A webhook's deliveries, for paging (newest first is the caller's order). */
    deliveries(webhookId: string): Knex.QueryBuilder {
      return webhooks()
        .where(`${WEBHOOKS}.id`, webhookId)
        .join(DELIVERIES, `${DELIVERIES}.webhook_id`, `${WEBHOOKS}.id`)
        .join(WEBHOOK_EVENTS, `${WEBHOOK_EVENTS}.id`, `${DELIVERIES}.event_id`);
    },

    async findDelivery(webhookId: string, deliveryId: string, { forUpdate = false } = {}): Promise<DeliveryRow | undefined> {
      const query = this.deliveries(webhookId).where(`${DELIVERIES}.id`, deliveryId).first(DELIVERY_COLUMNS);
      return (forUpdate ? query.forUpdate(DELIVERIES) : query) as Promise<DeliveryRow | undefined>;
    },

    /** Starts a finished delivery over: no attempts made, the first one due now. */
    async restartDelivery(deliveryId: string): Promise<void> {
      await db(DELIVERIES)
        .where('id', deliveryId)
        .update({ attempts: 0, delivered_at: null, failed_at: null, next_attempt_at: db.fn.now() });
    },
  };
}
