/**
 * A link created through the API, opened as a person's browser opens it: the Portal entry at
 * portal_url (which exchanges the token for a session cookie and sends the browser on to the
 * page without the token) and the short link, until the session expires and after. The pages
 * themselves are driven in a browser in test/portal.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../../generated/portal';
import type { Schemas } from '../../client';
import { customerWithAccount as withAccount, newCustomer, newDebtAccount, newSession, openLink, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Create = Schemas['CustomerSessionCreate'];
const HOUR = 3_600_000;
const DISPUTE = '4c8e2a71-5b3d-4f9e-8a16-0d7b9c2e3f54';
const EXPIRED_URL = 'https://www.acme-recovery.example/payment/link-expired';

const customerWithAccount = () => withAccount(app.api, { name: 'Dana Whitfield' }, { balance: 52000 });
const created = (body: Create) => newSession(app.api, body);

interface Entered {
  /** Where the entry sent the browser: the page, without the token. */
  location: string;
  /** The browser session's cookie, as a Cookie header. */
  cookie: string;
}

/** Opens the entry: 303 to the same page without the token, and the session cookie. */
async function opened(url: string): Promise<Entered> {
  const response = await openLink(url);
  expect(response.status).toBe(303);
  const location = response.headers.get('location')!;
  const page = new URL(url).pathname.replace(/\/s\/[^/]+/, '');
  expect(location).toBe(page);
  const setCookie = response.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!;
  expect(setCookie).toMatch(/^portal_session=[A-Za-z0-9_-]{43}; Path=\/portal; HttpOnly; SameSite=Lax$/);
  return { location, cookie: setCookie.split(';')[0]! };
}

/** The page the entry sent the browser to, opened with the cookie. */
function follow(entered: Entered): Promise<Response> {
  return fetch(`${app.origin}${entered.location}`, { headers: { cookie: entered.cookie }, redirect: 'manual' });
}

async function validTill(sessionId: string): Promise<string | null> {
  const row = await app.db('customer_sessions').where({ id: sessionId }).first('expires_at');
  return row.expires_at ? row.expires_at.toISOString() : null;
}

async function expectGone(url: string): Promise<void> {
  const response = await openLink(url);
  expect(response.status).toBe(410);
  // The Portal answers a page; a short link, the spec's error body.
  if (url.startsWith(app.config.portalUrl)) expect(await response.text()).toContain('This link has expired');
  else expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'gone' });
}

async function expectRedirect(url: string, location: string): Promise<void> {
  const response = await openLink(url);
  expect(response.status).toBe(302);
  expect(response.headers.get('location')).toBe(location);
}

async function expectNotFound(url: string): Promise<void> {
  const response = await openLink(url);
  expect(response.status).toBe(404);
  // The Portal answers a page; a short link, the spec's error body.
  if (url.startsWith(app.config.portalUrl)) expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  else expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'not_found' });
}

const at = (start: Date, ms: number) => app.clock.set(new Date(start.getTime() + ms));

describe('the Portal entry at portal_url', () => {
  test('each destination lands on its page, without the token and without any token header', async () => {
    const { customer, account } = await customerWithAccount();
    // A dispute on another account of theirs: the one above stays payable.
    const disputed = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), balance: 1000 });
    const dispute = (await app.api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: disputed.id } }, body: { reason: 'not_mine' } })).data!.data;
    const cases: [Create, string][] = [
      [{ customer_id: customer.id }, 'accounts_list'],
      [{ customer_id: customer.id, debt_account_id: account.id, destination: 'accounts_list' }, 'accounts_list'],
      [{ customer_id: customer.id, debt_account_id: account.id, destination: 'account_detail' }, 'account_detail'],
      [{ customer_id: customer.id, debt_account_id: account.id, destination: 'account_checkout' }, 'account_checkout'],
      [{ customer_id: customer.id, debt_account_id: account.id, destination: 'account_documents' }, 'account_documents'],
      [{ customer_id: customer.id, debt_account_dispute_id: dispute.id }, 'account_disputes_detail'],
    ];
    const pages: Record<string, string> = {
      accounts_list: 'Your accounts',
      account_detail: '$520.00',
      account_checkout: 'Make a payment',
      account_documents: 'There are no documents for this account.',
      account_disputes_detail: 'Your dispute',
    };
    for (const [body, destination] of cases) {
      const session = await created({ ...body, return_url: 'https://www.acme-recovery.example/thanks' });
      const page = await follow(await opened(session.portal_url));
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      const html = await page.text();
      expect(html).toContain(pages[destination]);
      if (destination === 'accounts_list') expect(html).toContain('Dana Whitfield');
    }
  });

  test('the document’s paths reach it with the typed client, on the Portal’s own base', async () => {
    const { customer, account } = await customerWithAccount();
    const session = await created({ customer_id: customer.id, debt_account_id: account.id, destination: 'account_checkout' });
    const [, , , token] = new URL(session.portal_url).pathname.split('/');
    const portal = createClient<paths>({ baseUrl: app.config.portalUrl });
    const { response } = await portal.GET('/s/{token}/accounts/{accountId}/checkout', { params: { path: { token: token!, accountId: account.id } }, redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/portal/accounts/${account.id}/checkout`);
  });

  test('with verification, every page sends the browser to verify first: no name, no amount', async () => {
    const { customer, account } = await customerWithAccount();
    const session = await created({ customer_id: customer.id, debt_account_id: account.id, verification: true });
    const page = await follow(await opened(session.portal_url));
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(`/portal/verify?next=${encodeURIComponent(`/portal/accounts/${account.id}`)}`);
    expect(await page.text()).not.toContain('Dana');
  });

  test('a page without the session cookie asks for the link again (401)', async () => {
    const { account } = await customerWithAccount();
    const response = await openLink(`${app.config.portalUrl}/accounts/${account.id}`);
    expect(response.status).toBe(401);
    expect(await response.text()).toContain('open your link again');
  });

  test('a token opens only its own page; an unknown token or a changed path answers 404', async () => {
    const { customer, account } = await customerWithAccount();
    const other = await newDebtAccount(app.api, customer.id);
    const session = await created({ customer_id: customer.id, debt_account_id: account.id, destination: 'account_checkout' });
    const url = new URL(session.portal_url);
    const base = url.pathname.replace(/\/accounts\/.*$/, '');
    for (const path of [
      `${base}/accounts`,
      `${base}/accounts/${account.id}`,
      `${base}/accounts/${account.id}/documents`,
      `${base}/accounts/${other.id}/checkout`,
      `${base}/disputes/${DISPUTE}`,
      `${base}/accounts/${account.id}/checkout/`,
      base,
      url.pathname.replace(/\/s\/[^/]+/, `/s/${'A'.repeat(43)}`),
    ]) {
      await expectNotFound(`${url.origin}${path}`);
    }
    expect((await openLink(session.portal_url)).status).toBe(303);
  });

  test('query parameters are the tags; the page opens with or without them', async () => {
    const { customer } = await customerWithAccount();
    const tags: Create['tags'] = [
      { name: 'utm_campaign', value: 'spring & summer' },
      { name: 'utm_content', value: 'R. Díaz #7' },
    ];
    const session = await created({ customer_id: customer.id, tags });
    const url = new URL(session.portal_url);
    expect([...url.searchParams]).toEqual([
      ['utm_source', app.organization.organization_id],
      ['utm_campaign', 'spring & summer'],
      ['utm_content', 'R. Díaz #7'],
    ]);
    await opened(session.portal_url);
    await opened(session.portal_url.split('?')[0]!);
  });
});

describe('expiry, on a controllable clock', () => {
  test('valid_until 1: valid until the last millisecond, not moved by use; from the hour on, to expiration_return_url', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, valid_until: 1, expiration_return_url: EXPIRED_URL });
    at(start, HOUR - 1);
    await opened(session.portal_url);
    expect(await validTill(session.id)).toBe(new Date(start.getTime() + HOUR).toISOString());
    at(start, HOUR);
    await expectRedirect(session.portal_url, EXPIRED_URL);
  });

  test('valid_until 2160: expires 90 days later to the millisecond; without expiration_return_url, 410', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, valid_until: 2160 });
    at(start, 2160 * HOUR - 1);
    await opened(session.portal_url);
    at(start, 2160 * HOUR);
    await expectGone(session.portal_url);
  });

  test('by default the window slides: 24 hours after creation, then 24 hours after each use', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, expiration_return_url: EXPIRED_URL });
    expect(session.valid_till).toBe(new Date(start.getTime() + 24 * HOUR).toISOString());
    at(start, 23 * HOUR);
    await opened(session.portal_url);
    expect(await validTill(session.id)).toBe(new Date(start.getTime() + 47 * HOUR).toISOString());
    // Past the first 24 hours: alive only because of the use.
    at(start, 47 * HOUR - 1);
    await opened(session.portal_url);
    expect(await validTill(session.id)).toBe(new Date(start.getTime() + 71 * HOUR - 1).toISOString());
    at(start, 71 * HOUR - 1);
    await expectRedirect(session.portal_url, EXPIRED_URL);
  });

  test('a session left unused for 24 hours has expired, and opening it later does not revive it', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id });
    at(start, 24 * HOUR);
    await expectGone(session.portal_url);
    at(start, 24 * HOUR + 1);
    await expectGone(session.portal_url);
    const row = await app.db('customer_sessions').where({ id: session.id }).first();
    expect(row.last_used_at).toBeNull();
    expect(row.expires_at.toISOString()).toBe(session.valid_till);
  });

  test('is_valid_forever: still open ten years on, valid_till null', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, is_valid_forever: true });
    at(start, 10 * 366 * 24 * HOUR);
    await opened(session.portal_url);
    expect(await validTill(session.id)).toBeNull();
  });

  test('each page the browser session opens is a use too, and once the session expires the page is the expired one', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, expiration_return_url: EXPIRED_URL });
    const entered = await opened(session.portal_url);
    at(start, 20 * HOUR);
    expect((await follow(entered)).status).toBe(200);
    expect(await validTill(session.id)).toBe(new Date(start.getTime() + 44 * HOUR).toISOString());
    at(start, 44 * HOUR);
    const page = await follow(entered);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe(EXPIRED_URL);
  });
});

describe('short links', () => {
  test('answer 302 to portal_url, tags included, and the browser lands on the page', async () => {
    const { customer, account } = await customerWithAccount();
    const session = await created({
      customer_id: customer.id,
      debt_account_id: account.id,
      destination: 'account_documents',
      tags: [{ name: 'utm_medium', value: 'sms text' }, { name: 'utm_content', value: 'Zahlung fällig & 支払い' }],
      short_link: true,
    });
    await expectRedirect(session.short_url!, session.portal_url);
    const page = await follow(await opened(session.portal_url));
    expect(page.status).toBe(200);
  });

  test('an unknown code answers 404', async () => {
    await expectNotFound(`${app.config.shortLinkBaseUrl}/Zz9Zz9Zz9Zz9`);
  });

  test('once expired: 302 to expiration_return_url, or 410 without one', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const withUrl = await created({ customer_id: customer.id, valid_until: 2, short_link: true, expiration_return_url: EXPIRED_URL });
    const without = await created({ customer_id: customer.id, valid_until: 2, short_link: true });
    at(start, 2 * HOUR);
    await expectRedirect(withUrl.short_url!, EXPIRED_URL);
    await expectGone(without.short_url!);
  });

  test('following one counts as a use: it slides the window', async () => {
    const { customer } = await customerWithAccount();
    const start = app.clock.now();
    const session = await created({ customer_id: customer.id, short_link: true });
    at(start, 20 * HOUR);
    await expectRedirect(session.short_url!, session.portal_url);
    at(start, 30 * HOUR);
    await opened(session.portal_url);
    expect(await validTill(session.id)).toBe(new Date(start.getTime() + 54 * HOUR).toISOString());
  });
});

describe('a session goes with its customer or account', () => {
  test('after the account is deleted, its links answer 404', async () => {
    const { customer, account } = await customerWithAccount();
    const session = await created({ customer_id: customer.id, debt_account_id: account.id, short_link: true });
    expect((await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: account.id } } })).response.status).toBe(200);
    await expectNotFound(session.portal_url);
    await expectNotFound(session.short_url!);
  });

  test('after the customer is deleted, its links answer 404', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const session = await created({ customer_id: customer.id, short_link: true });
    expect((await app.api.DELETE('/customers/{id}', { params: { path: { id: customer.id } } })).response.status).toBe(200);
    await expectNotFound(session.portal_url);
    await expectNotFound(session.short_url!);
  });
});

test('logs never hold a session token or a short code', async () => {
  const { customer } = await customerWithAccount();
  const session = await created({ customer_id: customer.id, short_link: true });
  await openLink(session.portal_url);
  await openLink(session.short_url!);
  const token = new URL(session.portal_url).pathname.split('/')[3]!;
  const code = new URL(session.short_url!).pathname.split('/').pop()!;
  const text = app.logs.join('');
  expect(text).toContain('/portal/s/[redacted]/accounts');
  expect(text).toContain('/s/[redacted]');
  expect(text).not.toContain(token);
  expect(text).not.toContain(code);
});
