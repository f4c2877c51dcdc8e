/** SQL of the event log: the events table the outbox writes (webhooks/outbox.ts), read by tenant. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { decodeEventBody } from '../event-body';

export const EVENTS = 'webhook_events';

export interface EventRow {
  id: string;
  name: string;
  object_id: string | null;
  sequence: string;
  occurred_at: Date;
  payload: unknown;
}

export interface EventFilters {
  /** An exact name, or a prefix (without the `*`) when `prefix` is set. */
  type?: { name: string; prefix: boolean };
  createdGte?: Date;
  createdLt?: Date;
  objectId?: string;
}

/** The payload is stored compressed (event-body.ts) and opened here. */
const withPayload = ({ body, ...row }: Omit<EventRow, 'payload'> & { body: Buffer }): EventRow => ({ ...row, payload: decodeEventBody(body) });

const COLUMNS = ['id', 'name', 'object_id', 'sequence', 'occurred_at', 'body'].map((column) => `${EVENTS}.${column}`);

/** LIKE's own characters in a prefix are taken literally. */
const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function eventLogRepo(db: Knex, tenant: Tenant) {
  const filtered = (filters: EventFilters) => {
    const query = scoped(db, EVENTS, tenant);
    if (filters.type) {
      if (filters.type.prefix) query.where(`${EVENTS}.name`, 'like', likePrefix(filters.type.name));
      else query.where(`${EVENTS}.name`, filters.type.name);
    }
    if (filters.createdGte) query.where(`${EVENTS}.occurred_at`, '>=', filters.createdGte);
    if (filters.createdLt) query.where(`${EVENTS}.occurred_at`, '<', filters.createdLt);
    if (filters.objectId) query.where(`${EVENTS}.object_id`, filters.objectId);
    return query;
  };
  return {
    /** One page, newest first (by time, then sequence), and the count of all that match. */
    async page(filters: EventFilters, { page, limit }: { page: number; limit: number }): Promise<{ total: number; rows: EventRow[] }> {
      const [[count], rows] = await Promise.all([
        filtered(filters).count<{ count: string }[]>({ count: '*' }),
        filtered(filters)
          .select(COLUMNS)
          .orderBy([
            { column: `${EVENTS}.occurred_at`, order: 'desc' },
            { column: `${EVENTS}.sequence`, order: 'desc' },
          ])
          .limit(limit)
          .offset((page - 1) * limit),
      ]);
      return { total: Number(count?.count ?? 0), rows: rows.map(withPayload) };
    },

    async find(id: string): Promise<EventRow | undefined> {
      const row = await scoped(db, EVENTS, tenant).where(`${EVENTS}.id`, id).first(COLUMNS);
      return row ? withPayload(row) : undefined;
    },
  };
}
