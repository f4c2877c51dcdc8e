/**
 * A guest of the Portal over plain HTTP, as a browser without JavaScript is: it keeps its
 * cookies, reads each form's CSRF token from the page, and posts forms. For the rules of
 * Portal accounts; what a person sees is driven in Chromium (sign-in-browser.test.ts).
 */
import type { TestApp } from '../support/test-app';
import type { ApiClient } from '../../client';

export interface Answer {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

export function portalGuest(app: TestApp) {
  const jar = new Map<string, string>();
  let csrf = '';
  const cookie = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  async function send(path: string, init: RequestInit = {}): Promise<Answer> {
    const response = await fetch(path.startsWith('http') ? path : path.startsWith('/portal/') ? `${app.origin}${path}` : `${app.origin}/portal${path}`, { ...init, redirect: 'manual', headers: { cookie: cookie(), ...(init.headers ?? {}) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/Expires=Thu, 01 Jan 1970/.test(line)) jar.delete(name!);
      else jar.set(name!, value.join('='));
    }
    const html = await response.text();
    csrf = /name="_csrf" value="([^"]*)"/.exec(html)?.[1] ?? csrf;
    return { status: response.status, location: response.headers.get('location'), html, headers: response.headers };
  }
  return {
    jar,
    get: (path: string) => send(path),
    post: (path: string, fields: Record<string, string>) =>
      send(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ _csrf: csrf, ...fields }).toString() }),
  };
}

export const organizationQuery = (app: TestApp) => `organization=${app.organization.organization_id}&environment=sandbox`;

/**
 * The link in the latest `account_security` e-mail to `to` about `subject` (the communications
 * log, as the API shows it; newest first, so tests move the clock a second between two links).
 */
export async function latestLink(api: ApiClient, customerId: string, to: string, subject: RegExp): Promise<string> {
  return (await linksSent(api, customerId, to, subject))[0]!;
}

/** Every such link, newest first. */
export async function linksSent(api: ApiClient, customerId: string, to: string, subject: RegExp): Promise<string[]> {
  const { data } = await api.GET('/communications', { params: { query: { customer_id: customerId, kind: 'account_security', limit: 100 } } });
  const mails = data!.data.filter((mail) => mail.to === to && subject.test(mail.subject));
  return mails.sort((a, b) => b.created_at.localeCompare(a.created_at)).map((mail) => /(http\S+\?token=[A-Za-z0-9_-]+)/.exec(mail.text)![1]!);
}

/** Text of the page as a person reads it (tags out, entities as written). */
export const textOf = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
