/**
 * The paging envelope of spec 2.9, written once: page and limit in, data + meta + links out.
 * Links keep every query parameter of the request and change only `page`.
 */
import type { Request } from 'express';
import type { Knex } from 'knex';
import { concurrently } from '../db/concurrently';
import type { components } from '../../generated/schema';
import { ApiError } from '../kernel/errors';
import { originOf } from './host';

type Meta = components['schemas']['PaginationMeta'];
type Links = components['schemas']['PaginationLinks'];

export interface Page<T> {
  data: T[];
  meta: Meta;
  links: Links;
}

export interface PageRequest {
  page: number;
  limit: number;
}

export function pageRequest(req: Request): PageRequest {
  // The validator has already checked both against the document (page 1..2^31-1, limit
  // 1..500); checked again, as a non-finite limit would make knex drop the LIMIT.
  const page = Number(req.query.page ?? 1);
  const limit = Number(req.query.limit ?? 10);
  const errors: Record<string, string[]> = {};
  if (!Number.isSafeInteger(page) || page < 1) errors['query.page'] = ['must be a whole number from 1'];
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 500) errors['query.limit'] = ['must be a whole number from 1 to 500'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return { page, limit };
}

/** The links are absolute, on the Host the client used; one that is not a host is a 400 (RFC 9112, 3.2; http/host.ts). */
function collectionUrl(req: Request): URL {
  const origin = originOf(req);
  if (origin === undefined) throw new ApiError('bad_request', 'The Host header is not a valid host.');
  return new URL(`${origin}${req.baseUrl}${req.path}`);
}

/** RFC 3986 encoding: a space is %20 (not +), and ( ) ' ! * are escaped too, as the validator wants. */
export const encodeQueryValue = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The request's URL with every query parameter but the page's (`page`, and the cursor `starting_after`), then `last`. */
export function pageLinkWith(req: Request, last: [string, string]): string {
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(req.query)) {
    if (key === 'page' || key === 'starting_after') continue;
    for (const item of Array.isArray(value) ? value : [value]) pairs.push(`${encodeQueryValue(key)}=${encodeQueryValue(String(item))}`);
  }
  pairs.push(`${encodeQueryValue(last[0])}=${encodeQueryValue(last[1])}`);
  return `${collectionUrl(req).toString()}?${pairs.join('&')}`;
}

const pageLink = (req: Request, page: number) => pageLinkWith(req, ['page', String(page)]);

/**
 * Builds the envelope for one page: `rows` as fetched (their created_at is the submitted
 * date of the meta) and `data`, the same records as API objects.
 */
export function envelope<T>(
  req: Request,
  { page, limit }: PageRequest,
  total: number,
  rows: { created_at: Date }[],
  data: T[],
): Page<T> {
  const lastPage = Math.max(1, Math.ceil(total / limit));
  const from = rows.length > 0 ? (page - 1) * limit + 1 : null;
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    data,
    meta: {
      current_page: page,
      from,
      to: from === null ? null : from + rows.length - 1,
      last_page: lastPage,
      per_page: limit,
      total,
      path: collectionUrl(req).toString(),
      from_submitted_date: first ? first.created_at.toISOString() : null,
      to_submitted_date: last ? last.created_at.toISOString() : null,
    },
    links: {
      first: pageLink(req, 1),
      last: pageLink(req, lastPage),
      prev: page > 1 ? pageLink(req, Math.min(page - 1, lastPage)) : null,
      next: page < lastPage ? pageLink(req, page + 1) : null,
    },
  };
}

/** Runs a filtered query twice: the count, and one page in a stable order (created_at, id; oldest first unless `order` says otherwise). */
export async function paginate<Row>(
  query: Knex.QueryBuilder,
  { page, limit }: PageRequest,
  columns: string[],
  table: string,
  order: 'asc' | 'desc' = 'asc',
): Promise<{ total: number; rows: Row[] }> {
  const count = () => query.clone().clearSelect().clearOrder().count<{ count: string }[]>({ count: '*' });
  const fetch = async () =>
    (await query
      .clone()
      .select(columns)
      .orderBy([
        { column: `${table}.created_at`, order },
        { column: `${table}.id`, order },
      ])
      .limit(limit)
      .offset((page - 1) * limit)) as Row[];
  // The count and the page at once: one round trip less per list.
  const [[countRow], rows] = await concurrently(query, count, fetch);
  return { total: Number(countRow?.count ?? 0), rows };
}
