/** SQL of the event log: the events table the outbox writes (webhooks/outbox.ts), read by tenant. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { decodeEventBody } from '../kernel/event-body';

export const EVENTS = 'webhook_events';

export interface EventRow {
  id: string;
  name: string;
  object_id: string | null;
  sequence: string;
  occurred_at: Date;
  payload: unknown;
}

/** An event as stored: its payload still the stored body (event-body.ts). */
export interface StoredEventRow extends Omit<EventRow, 'payload'> {
  body: Buffer;
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
  /** Events after the event `startingAfter` in the list's order (older), by the database's own values of it. */
  const after = (query: Knex.QueryBuilder, startingAfter: string | undefined) =>
    startingAfter
      ? query.whereRaw(`(${EVENTS}.occurred_at, ${EVENTS}.sequence) < (SELECT c.occurred_at, c.sequence FROM ${EVENTS} c WHERE c.id = ?)`, [startingAfter])
      : query;
  return {
    /** Whether `id` is an event of the tenant still in the log. */
    async exists(id: string): Promise<boolean> {
      return Boolean(await scoped(db, EVENTS, tenant).where(`${EVENTS}.id`, id).first('id'));
    },

    /**
     * The stored rows of one page, newest first, after the event `startingAfter` when given,
     * and counts: all that match, and those up to `startingAfter` included (0 without it). Of
     * the page's `limit` rows only those whose stored bodies before them add up to less than
     * `maxBytes` are fetched: a stored body is never larger than its text by more than a few
     * bytes, so the rows an answer of `maxBytes` can hold are all there, and no more are read.
     */
    async storedPage(
      filters: EventFilters,
      { page, limit, startingAfter }: { page: number; limit: number; startingAfter?: string },
      maxBytes: number,
    ): Promise<{ total: number; before: number; rows: StoredEventRow[] }> {
      const counts = filtered(filters).select(
        db.raw('count(*) AS total'),
        startingAfter
          ? db.raw(`count(*) FILTER (WHERE (${EVENTS}.occurred_at, ${EVENTS}.sequence) >= (SELECT c.occurred_at, c.sequence FROM ${EVENTS} c WHERE c.id = ?)) AS before`, [startingAfter])
          : db.raw('0 AS before'),
      );
      const inner = after(filtered(filters), startingAfter)
        .select(`${EVENTS}.id`, `${EVENTS}.occurred_at`, `${EVENTS}.sequence`, db.raw(`octet_length(${EVENTS}.body) AS size`))
        .orderBy([
          { column: `${EVENTS}.occurred_at`, order: 'desc' },
          { column: `${EVENTS}.sequence`, order: 'desc' },
        ])
        .limit(limit)
        .offset((page - 1) * limit)
        .toSQL();
      const [[count], { rows }] = await Promise.all([
        counts as unknown as Promise<{ total: string; before: string }[]>,
        db.raw<{ rows: StoredEventRow[] }>(
          `WITH page AS (${inner.sql}),
                sized AS (SELECT id, occurred_at, sequence, sum(size) OVER (ORDER BY occurred_at DESC, sequence DESC) - size AS before FROM page)
           SELECT e.id, e.name, e.object_id, e.sequence, e.occurred_at, e.body
             FROM sized JOIN ${EVENTS} e ON e.id = sized.id
            WHERE sized.before < ?
            ORDER BY sized.occurred_at DESC, sized.sequence DESC`,
          [...inner.bindings, maxBytes],
        ),
      ]);
      return { total: Number(count?.total ?? 0), before: Number(count?.before ?? 0), rows };
    },

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
