import type { Schemas } from '../../client';
import { loadConfig } from '../../server/kernel/config';
import { createOrganization } from '../../server/organizations/organization-repo';
import { expectFieldError, newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Create = Schemas['CustomerSessionCreate'];
const DISPUTE = '4c8e2a71-5b3d-4f9e-8a16-0d7b9c2e3f54';

async function sessionCount(): Promise<number> {
  const [row] = await app.db('customer_sessions').count<{ count: string }[]>({ count: '*' });
  return Number(row!.count);
}

describe('POST /bulk/customer-sessions', () => {
  test('answers one session per item, in request order, echoing the ids as supplied', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const account = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC') });
    const items: Create[] = [
      { customer_id: customer.external_id!, debt_account_id: account.external_id!, destination: 'account_checkout', short_link: true },
      { customer_id: customer.id, valid_until: 168, expiration_return_url: 'https://www.acme-recovery.example/expired' },
      { customer_id: customer.id, debt_account_dispute_id: DISPUTE, is_valid_forever: true },
    ];
    const { data, response } = await app.api.POST('/bulk/customer-sessions', { body: items });
    expect(response.status).toBe(201);
    const sessions = data!.data;
    expect(sessions.map(({ customer_id, debt_account_id, debt_account_dispute_id }) => ({ customer_id, debt_account_id, debt_account_dispute_id }))).toEqual([
      { customer_id: customer.external_id, debt_account_id: account.external_id, debt_account_dispute_id: null },
      { customer_id: customer.id, debt_account_id: null, debt_account_dispute_id: null },
      { customer_id: customer.id, debt_account_id: null, debt_account_dispute_id: DISPUTE },
    ]);
    expect(new URL(sessions[0]!.portal_url).pathname).toMatch(new RegExp(`/accounts/${account.id}/checkout$`));
    expect(sessions[0]!.short_url).not.toBeNull();
    expect(new URL(sessions[1]!.portal_url).pathname).toMatch(/\/accounts$/);
    expect(sessions[1]).toMatchObject({ short_url: null, expiration_return_url: 'https://www.acme-recovery.example/expired' });
    expect(sessions[1]!.valid_till).toBe(new Date(app.clock.now().getTime() + 168 * 3_600_000).toISOString());
    expect(new URL(sessions[2]!.portal_url).pathname).toMatch(new RegExp(`/disputes/${DISPUTE}$`));
    expect(sessions[2]!.valid_till).toBeNull();
    expect(new Set(sessions.map((s) => s.id)).size).toBe(3);
  });

  test('1 and 100 items are accepted; 0 and 101 answer 422 on body and create nothing', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const item = { customer_id: customer.id, short_link: true };
    for (const count of [1, 100]) {
      const { data, response } = await app.api.POST('/bulk/customer-sessions', { body: Array(count).fill(item) });
      expect(response.status).toBe(201);
      expect(data!.data).toHaveLength(count);
      expect(new Set(data!.data.map((s) => s.short_url)).size).toBe(count);
    }
    const before = await sessionCount();
    for (const count of [0, 101]) {
      const { response, error } = await app.api.POST('/bulk/customer-sessions', { body: Array(count).fill(item) });
      expect(response.status).toBe(422);
      expectFieldError(error, 'body');
    }
    expect(await sessionCount()).toBe(before);
  });

  test('an invalid item fails the whole request: every error keyed by item index and field, no session made', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const other = await newCustomer(app.api, { external_id: unique('CUST') });
    const othersAccount = await newDebtAccount(app.api, other.id);
    const before = await sessionCount();
    const { response, error } = await app.api.POST('/bulk/customer-sessions', {
      body: [
        { customer_id: customer.id },
        { customer_id: 'NO-SUCH-CUSTOMER' },
        { customer_id: customer.id, debt_account_id: othersAccount.id },
        { customer_id: customer.id, tags: [{ name: 'utm_id', value: 'a' }, { name: 'utm_id', value: 'b' }] },
        { customer_id: customer.id },
      ],
    });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors).sort()).toEqual(['[1].customer_id', '[2].debt_account_id', '[3].tags']);
    expect(await sessionCount()).toBe(before);
  });

  test('an item the document refuses is keyed by index too', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const { response, error } = await app.api.POST('/bulk/customer-sessions', {
      body: [
        { customer_id: customer.id },
        { customer_id: customer.id, valid_until: 2161 },
        { customer_id: customer.id, destination: 'account_checkout' },
        { customer_id: customer.id, is_valid_forever: true, valid_until: 1 },
      ],
    });
    expect(response.status).toBe(422);
    for (const key of ['[1].valid_until', '[2].destination', '[3].valid_until']) expectFieldError(error, key);
    expect(Object.keys((error as { errors: object }).errors).some((key) => key.startsWith('[0]'))).toBe(false);
  });

  test('another organization’s customer is a 422 on that item', async () => {
    const customer = await newCustomer(app.other, { external_id: unique('CUST') });
    const { response, error } = await app.api.POST('/bulk/customer-sessions', { body: [{ customer_id: customer.id }] });
    expect(response.status).toBe(422);
    expectFieldError(error, '[0].customer_id');
  });
});

describe('bulk session throttle', () => {
  test('the default is 30 requests a minute per token: the 31st answers 429 with Retry-After; other operations and other tokens go on', async () => {
    expect(app.config.bulkSessionRateLimitPerMinute).toBe(30);
    const fresh = await createOrganization(app.db, 'Throttled Recovery', 'ops@throttled.example');
    const client = app.clientFor(fresh.production_token);
    const customer = await newCustomer(client, { external_id: unique('CUST') });
    const statuses: number[] = [];
    let last: { response: Response; error?: unknown } | undefined;
    for (let i = 0; i < 31; i++) {
      last = await client.POST('/bulk/customer-sessions', { body: [{ customer_id: customer.id }] });
      statuses.push(last.response.status);
      if (i === 0) {
        expect(last.response.headers.get('ratelimit-limit')).toBe('30');
        expect(last.response.headers.get('ratelimit-remaining')).toBe('29');
      }
    }
    expect(statuses).toEqual([...Array(30).fill(201), 429]);
    expect(Number(last!.response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(last!.error).toEqual({ error: expect.stringMatching(/Try again in \d+ seconds/), errorCode: 'rate_limited' });
    const [row] = await app.db('customer_sessions').where({ organization_id: fresh.organization_id }).count<{ count: string }[]>({ count: '*' });
    expect(Number(row!.count)).toBe(30);

    expect((await client.POST('/customer-sessions', { body: { customer_id: customer.id } })).response.status).toBe(201);
    const sandboxCustomer = await newCustomer(app.clientFor(fresh.sandbox_token), { external_id: unique('CUST') });
    const otherToken = await app.clientFor(fresh.sandbox_token).POST('/bulk/customer-sessions', { body: [{ customer_id: sandboxCustomer.id }] });
    expect(otherToken.response.status).toBe(201);
  });

  test('BULK_SESSION_RATE_LIMIT_PER_MINUTE sets the limit; 30 when unset', () => {
    expect(loadConfig({}).bulkSessionRateLimitPerMinute).toBe(30);
    expect(loadConfig({ BULK_SESSION_RATE_LIMIT_PER_MINUTE: '200' }).bulkSessionRateLimitPerMinute).toBe(200);
    expect(() => loadConfig({ BULK_SESSION_RATE_LIMIT_PER_MINUTE: '0' })).toThrow(/BULK_SESSION_RATE_LIMIT_PER_MINUTE/);
  });

  test('invalid requests count too', async () => {
    const fresh = await createOrganization(app.db, 'Careless Recovery', 'ops@careless.example');
    const client = app.clientFor(fresh.production_token);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await client.POST('/bulk/customer-sessions', { body: [] })).response.status);
    expect(statuses).toEqual([...Array(30).fill(422), 429]);
  });
});
