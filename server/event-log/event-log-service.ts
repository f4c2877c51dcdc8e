/**
 * The event log (GET /events): what was recorded for the tenant in the last
 * EVENT_RETENTION_DAYS, whether or not a webhook subscribed, with its payload. The filters'
 * rules that the document's schema cannot state are checked here, each a 422 on its parameter.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import type { PageRequest } from '../http/pagination';
import { loadDocument } from '../http/validator';
import { eventBodyBytes } from '../kernel/event-body';
import { eventLogRepo, type EventFilters, type EventRow, type StoredEventRow } from './event-log-repo';

type S = components['schemas'];

export interface EventQuery {
  type?: string;
  starting_after?: string;
  created_gte?: string;
  created_lt?: string;
  object_id?: string;
}

let catalogue: string[] | undefined;
/** The event names of the document (its EventName enum). */
function eventNames(): string[] {
  catalogue ??= ((loadDocument() as { components: { schemas: Record<string, { enum?: string[] }> } }).components.schemas.EventName?.enum ?? []).slice();
  return catalogue;
}

export function eventToApi(row: EventRow): S['Event'] {
  const at = row.occurred_at.toISOString();
  return {
    id: row.id,
    type: row.name as S['EventName'],
    // Events written before the log kept objects have none; their id stands in.
    object_id: row.object_id ?? row.id,
    sequence: Number(row.sequence),
    created_at: at,
    occurred_at: at,
    data: row.payload as S['Event']['data'],
  };
}

function filtersOf(query: EventQuery): EventFilters {
  const errors: Record<string, string[]> = {};
  const filters: EventFilters = {};
  if (query.type !== undefined) {
    const prefix = query.type.endsWith('.*');
    const name = prefix ? query.type.slice(0, -1) : query.type;
    const known = prefix ? eventNames().some((event) => event.startsWith(name)) : eventNames().includes(name);
    if (known) filters.type = { name, prefix };
    else errors['query.type'] = [prefix ? `no event name starts with ${name}` : 'is not an event name, nor a prefix followed by .*'];
  }
  if (query.created_gte !== undefined) filters.createdGte = new Date(query.created_gte);
  if (query.created_lt !== undefined) filters.createdLt = new Date(query.created_lt);
  if (filters.createdGte && filters.createdLt && filters.createdLt <= filters.createdGte) errors['query.created_lt'] = ['must be after created_gte'];
  if (query.object_id !== undefined) filters.objectId = query.object_id;
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return filters;
}

/** An event of a page as JSON text: eventToApi's object, byte for byte, with the stored payload text as `data`. */
export interface EventText {
  row: StoredEventRow;
  bytes: Buffer;
}

function eventText(row: StoredEventRow): EventText {
  const at = row.occurred_at.toISOString();
  const head = JSON.stringify({ id: row.id, type: row.name, object_id: row.object_id ?? row.id, sequence: Number(row.sequence), created_at: at, occurred_at: at });
  const bytes = Buffer.concat([Buffer.from(`${head.slice(0, -1)},"data":`, 'utf8'), eventBodyBytes(row.body), Buffer.from('}', 'utf8')]);
  return { row, bytes };
}

/** A page of the event log as read: its events' texts, at most `maxBytes` of them with `room` to spare. */
export interface EventPage {
  total: number;
  /** Events of the list before this page's first (its position less one). */
  offset: number;
  events: EventText[];
  /** Cut at the size ceiling before `limit` events while more followed. */
  truncated: boolean;
  startingAfter: string | undefined;
}

export function eventLogService({ db, config }: Pick<AppDeps, 'db' | 'config'>) {
  return {
    /**
     * One page of the log, its events' texts taken in order while they fit in `maxBytes` less
     * `room` (the envelope's), always at least one; so cut, the page says so.
     */
    async page(tenant: Tenant, query: EventQuery, { page, limit }: PageRequest, room: number): Promise<EventPage> {
      const filters = filtersOf(query);
      const startingAfter = query.starting_after;
      const repo = eventLogRepo(db, tenant);
      if (startingAfter !== undefined) {
        const errors: Record<string, string[]> = {};
        if (page !== 1) errors['query.page'] = ['must be 1 (or left out) with starting_after'];
        else if (!(await repo.exists(startingAfter))) errors['query.starting_after'] = ['is not an event of this organization and environment (or no longer kept)'];
        if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
      }
      const budget = Math.max(0, config.eventsPageMaxBytes - room);
      const { total, before, rows } = await repo.storedPage(filters, { page, limit, startingAfter }, budget);
      const offset = startingAfter !== undefined ? before : (page - 1) * limit;
      const events: EventText[] = [];
      let bytes = 0;
      for (const row of rows) {
        const text = eventText(row);
        // A comma between events; the first is sent whatever its size, or no page would ever move on.
        if (events.length > 0 && bytes + 1 + text.bytes.length > budget) break;
        bytes += text.bytes.length + (events.length > 0 ? 1 : 0);
        events.push(text);
      }
      const truncated = events.length < Math.min(limit, Math.max(0, total - offset));
      return { total, offset, events, truncated, startingAfter };
    },

    async find(tenant: Tenant, id: string): Promise<S['Event']> {
      const row = await eventLogRepo(db, tenant).find(id);
      if (!row) throw ApiError.notFound('Event');
      return eventToApi(row);
    },
  };
}
