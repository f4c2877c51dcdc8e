/**
 * The event log (GET /events): what was recorded for the tenant in the last
 * EVENT_RETENTION_DAYS, whether or not a webhook subscribed, with its payload. The filters'
 * rules that the document's schema cannot state are checked here, each a 422 on its parameter.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import type { Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { loadDocument } from '../http/validator';
import { eventLogRepo, type EventFilters, type EventRow } from './event-log-repo';

type S = components['schemas'];

export interface EventQuery {
  type?: string;
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

export function eventLogService({ db }: Pick<AppDeps, 'db'>) {
  return {
    async list(tenant: Tenant, query: EventQuery, page: PageRequest): Promise<Listed<S['Event']>> {
      const { total, rows } = await eventLogRepo(db, tenant).page(filtersOf(query), page);
      return { total, rows: rows.map((row) => ({ created_at: row.occurred_at })), data: rows.map(eventToApi) };
    },

    async find(tenant: Tenant, id: string): Promise<S['Event']> {
      const row = await eventLogRepo(db, tenant).find(id);
      if (!row) throw ApiError.notFound('Event');
      return eventToApi(row);
    },
  };
}
