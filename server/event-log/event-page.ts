/**
 * The answer of GET /events as bytes: the paging envelope (spec 2.9's meta and links, as every
 * list's) around the events' texts, each payload written as it was stored (event-log-service.ts),
 * not parsed and serialized again. A page cut at the size ceiling, or read after an event
 * (`starting_after`), continues with `starting_after` = its last event; see
 * openapi/paths/events.yaml.
 */
import type { Request } from 'express';
import type { components } from '../../generated/schema';
import { envelope, pageLinkWith, type PageRequest } from '../http/pagination';
import type { EventPage } from './event-log-service';

type Links = components['schemas']['PaginationLinks'];
type Meta = components['schemas']['PaginationMeta'];

/** What the envelope around the events may take at most: meta and links, with their longest values. */
export function envelopeRoom(req: Request, page: PageRequest): number {
  const longest = pageLinkWith(req, ['starting_after', '00000000-0000-0000-0000-000000000000']);
  const { meta, links } = envelope(req, page, Number.MAX_SAFE_INTEGER, [], []);
  const widest = { ...meta, from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER, from_submitted_date: new Date(0).toISOString(), to_submitted_date: new Date(0).toISOString() };
  const tail = JSON.stringify({ meta: widest, links: { first: longest, last: longest, prev: longest, next: longest }, truncated: false });
  return Buffer.byteLength(tail, 'utf8') + '{"data":[],'.length + 64;
}

export function eventPageBytes(req: Request, page: PageRequest, read: EventPage): Buffer {
  const { total, offset, events, truncated, startingAfter } = read;
  const cursor = startingAfter !== undefined;
  const rows = events.map((event) => ({ created_at: event.row.occurred_at }));
  let meta: Meta;
  let links: Links;
  if (!cursor) {
    ({ meta, links } = envelope(req, page, total, rows, []));
  } else {
    // After an event: positions in the whole list, and the page number that holds the first.
    const current = Math.floor(offset / page.limit) + 1;
    ({ meta, links } = envelope(req, { page: current, limit: page.limit }, total, rows, []));
    const from = events.length > 0 ? offset + 1 : null;
    meta = { ...meta, from, to: from === null ? null : from + events.length - 1 };
    links = { ...links, prev: null };
  }
  const last = events[events.length - 1];
  if (cursor || truncated) {
    links = { ...links, next: last && offset + events.length < total ? pageLinkWith(req, ['starting_after', last.row.id]) : null };
  }
  const parts: Buffer[] = [Buffer.from('{"data":[', 'utf8')];
  events.forEach((event, i) => {
    if (i > 0) parts.push(Buffer.from(',', 'utf8'));
    parts.push(event.bytes);
  });
  parts.push(Buffer.from(`],${JSON.stringify({ meta, links, truncated }).slice(1)}`, 'utf8'));
  return Buffer.concat(parts);
}
