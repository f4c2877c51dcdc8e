/**
 * Pages are rendered here with Eta: templates are plain files read at run time (nothing to
 * build before `npm start`), and `<%= %>` escapes by default, so a customer's name or an
 * organization's external id can never become markup; raw output (`<%~ %>`) is used only
 * to place one rendered template inside the layout.
 */
import { join } from 'node:path';
import { Eta } from 'eta';
import type { Response } from 'express';
import { words } from './words';

const eta = new Eta({ views: join(__dirname, 'views'), cache: true, autoEscape: true, autoTrim: false });

/** Cents as the customer reads them: $1,234.50. */
export function dollars(cents: number | string | null | undefined): string {
  const value = Number(cents ?? 0);
  const sign = value < 0 ? '-' : '';
  return `${sign}$${(Math.abs(value) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/**
 * A date (YYYY-MM-DD or a timestamp) as the customer reads it: Nov 24, 2026. A calendar date is
 * that day; an instant is its day in the debtor's zone (`zone`, debtor-zone.ts), UTC only when
 * no customer is known.
 */
export function day(value: string | Date | null | undefined, zone = 'UTC'): string {
  if (!value) return '';
  const calendar = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);
  const date = typeof value === 'string' ? (calendar ? new Date(`${value}T12:00:00Z`) : new Date(value)) : value;
  return date.toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: calendar ? 'UTC' : zone });
}

export interface PageContext {
  /** The Portal's base path ('' or '/portal'): every link and form action starts with it. */
  base: string;
  csrf?: string;
  /** For the header's sign-out and back links. */
  signedIn?: boolean;
}

/** The debtor's zone for this answer's dates, set once the visit's customer is known (browser-sessions.ts). */
export const ZONE_LOCAL = 'debtorTimeZone';
/** The organization of this answer as a guest page's query (`organization=…`), for the ways back in of a signed-out page. */
export const ORGANIZATION_LOCAL = 'organizationQuery';

export function renderPage(res: Response, status: number, view: string, title: string, context: PageContext, data: object = {}): void {
  const zone = typeof res.locals[ZONE_LOCAL] === 'string' ? (res.locals[ZONE_LOCAL] as string) : 'UTC';
  const organizationQuery = typeof res.locals[ORGANIZATION_LOCAL] === 'string' ? (res.locals[ORGANIZATION_LOCAL] as string) : undefined;
  const html = eta.render(view, { organizationQuery, ...data, title, ...context, dollars, day: (value: string | Date | null | undefined) => day(value, zone), words });
  res.status(status).type('html').send(html);
}
