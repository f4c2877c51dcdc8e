import { createApiClient } from '../../client';
import { createOrganization, rotateToken } from '../../server/organizations/organization-repo';
import { startSecondServer, startTestApp, type TestApp } from '../support/test-app';

const LIMIT = 5;
let app: TestApp;
let second: Awaited<ReturnType<typeof startSecondServer>> | undefined;
let secondBaseUrl: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimitPerMinute: LIMIT });
  // A second server process over the same database, as operators run them.
  second = await startSecondServer(app);
  secondBaseUrl = second.baseUrl;
});
afterAll(async () => {
  await second?.close();
  await app?.stop();
});

describe('rate limit', () => {
  test(`allows ${LIMIT} requests a minute per token, then answers 429 with Retry-After and RateLimit headers`, async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    let lastError: unknown;
    for (let i = 0; i <= LIMIT; i++) {
      const { response, error } = await app.api.GET('/customers');
      statuses.push(response.status);
      last = response;
      lastError = error;
      if (i === 0) {
        expect(response.headers.get('ratelimit-limit')).toBe(String(LIMIT));
        expect(response.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
      }
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429]);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(last!.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(last!.headers.get('ratelimit-remaining')).toBe('0');
    expect(lastError).toEqual({ error: expect.stringMatching(/Try again in \d+ seconds/), errorCode: 'rate_limited' });
  });

  test('another token has its own count', async () => {
    const { response } = await app.other.GET('/customers');
    expect(response.status).toBe(200);
  });

  test('the count is shared by every server process on the database', async () => {
    const token = app.organization.sandbox_token;
    const first = createApiClient({ baseUrl: app.baseUrl, token });
    const other = createApiClient({ baseUrl: secondBaseUrl, token });
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push((await (i % 2 === 0 ? first : other).GET('/customers')).response.status);
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429]);
  });

  test('a refused request changes nothing', async () => {
    // A token of its own, its quota used up here, so the test does not lean on the others.
    const fresh = await createOrganization(app.db, 'Late Recovery', 'ops@late-recovery.example');
    const client = createApiClient({ baseUrl: app.baseUrl, token: fresh.production_token });
    for (let i = 0; i < LIMIT; i++) expect((await client.GET('/customers')).response.status).toBe(200);
    const { response } = await client.POST('/customers', { body: { name: 'Late', email: 'late@mail.debt-collection.example' } });
    expect(response.status).toBe(429);
    const rows = await app.db('customers').where({ name: 'Late' });
    expect(rows).toEqual([]);
  });

  test('the Portal entry and short links need no token and do not count', async () => {
    const fresh = await createOrganization(app.db, 'Link Only Recovery', 'ops@link-only.example');
    const client = createApiClient({ baseUrl: app.baseUrl, token: fresh.production_token });
    const customer = await client.POST('/customers', { body: { name: 'Dana Whitfield', email: 'dana@mail.debt-collection.example' } });
    const session = await client.POST('/customer-sessions', { body: { customer_id: customer.data!.data.id, short_link: true } });
    for (let i = 0; i < LIMIT * 2; i++) {
      expect((await fetch(session.data!.data.portal_url, { redirect: 'manual' })).status).toBe(303);
      expect((await fetch(session.data!.data.short_url!, { redirect: 'manual' })).status).toBe(302);
    }
    const { response } = await client.GET('/customers');
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 3));
  });

  test('requests sent at once are counted one by one: exactly the limit pass, each with its own remaining count', async () => {
    const fresh = await createOrganization(app.db, 'Burst Recovery', 'ops@burst-recovery.example');
    const clients = [app.baseUrl, secondBaseUrl].map((baseUrl) => createApiClient({ baseUrl, token: fresh.production_token }));
    const responses = await Promise.all(Array.from({ length: LIMIT + 4 }, (_, i) => clients[i % 2]!.GET('/customers').then((r) => r.response)));
    const passed = responses.filter((r) => r.status === 200);
    expect(passed).toHaveLength(LIMIT);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(4);
    const remaining = passed.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => i));
  });

  test('a revoked token is refused at once by every server process, and the new one works', async () => {
    const fresh = await createOrganization(app.db, 'Rotating Recovery', 'ops@rotating-recovery.example');
    const oldClients = [app.baseUrl, secondBaseUrl].map((baseUrl) => createApiClient({ baseUrl, token: fresh.sandbox_token }));
    for (const client of oldClients) expect((await client.GET('/customers')).response.status).toBe(200);
    const newToken = await rotateToken(app.db, fresh.organization_id, 'sandbox');
    for (const client of oldClients) {
      const { response, error } = await client.GET('/customers');
      expect(response.status).toBe(401);
      expect(error).toEqual({ error: expect.any(String), errorCode: 'unauthenticated' });
    }
    const renewed = createApiClient({ baseUrl: secondBaseUrl, token: newToken! });
    expect((await renewed.GET('/customers')).response.status).toBe(200);
  });
});
