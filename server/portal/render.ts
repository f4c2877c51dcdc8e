/**
 * Pages are rendered here with Eta: templates are plain files read at run time (nothing to
 * build before `npm start`), and `<%= %>` escapes by default, so a customer's name or an
 * organization's external id can never become markup; raw output (`<%~ %>`) is used only
 * to place one rendered template inside the layout.
 */
import { join } from 'node:path';
import { Eta } from 'eta';
import type { Response } from 'express';

const eta = new Eta({ views: join(__dirname, 'views'), cache: true, autoEscape: true, autoTrim: false });

/** Cents as the customer reads them: $1,234.50. */
export function dollars(cents: number | string | null | undefined): string {
  const value = Number(cents ?? 0);
  const sign = value < 0 ? '-' : '';
  return `${sign}$${(Math.abs(value) / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A date (YYYY-MM-DD or a timestamp) as the customer reads it: Nov 24, 2026. */
export function day(value: string | Date | null | undefined): string {
  if (!value) return '';
  const date = typeof value === 'string' ? new Date(`${value.slice(0, 10)}T12:00:00Z`) : value;
  return date.toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export interface PageContext {
  /** The Portal's base path ('' or '/portal'): every link and form action starts with it. */
  base: string;
  csrf?: string;
  /** For the header's sign-out and back links. */
  signedIn?: boolean;
}

export function renderPage(res: Response, status: number, view: string, title: string, context: PageContext, data: object = {}): void {
  const html = eta.render(view, { ...data, title, ...context, dollars, day });
  res.status(status).type('html').send(html);
}
