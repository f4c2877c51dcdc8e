/**
 * Leases of the rate limit's points (server/http/token-leases.ts): a token used
 * often is answered from a few points its process took ahead, every request still counted in
 * the one shared count, and a revoked token refused by every process once a lease ends.
 */
import { createApiClient } from '../../client';
import { hashToken } from '../../server/crypto/secrets';
import { LEASE_MS } from '../../server/http/token-leases';
import { createOrganization, rotateToken } from '../../server/organizations/organization-repo';
import { startSecondServer, startTestApp, type TestApp } from '../support/test-app';

// Leases of 16 to 100 points (1/64 of the limit), while a token is under 3200 in its window.
const LIMIT = 6400;
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

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
/** The shared count of a token's requests in the current window. */
const counted = async (token: string) => Number((await app.db('rate_limits').where({ key: `api:${hashToken(token)}` }).first('points'))?.points ?? 0);

/** `rounds` bursts of `size` requests at once to each of the two processes. */
async function bursts(token: string, rounds: number, size: number): Promise<Response[]> {
  const clients = [app.baseUrl, secondBaseUrl].map((baseUrl) => createApiClient({ baseUrl, token }));
  const responses: Response[] = [];
  for (let round = 0; round < rounds; round++) {
    responses.push(...(await Promise.all(Array.from({ length: size * 2 }, (_, i) => clients[i % 2]!.GET('/customers').then((r) => r.response)))));
  }
  return responses;
}

describe('leases of the rate limit', () => {
  test('requests answered from leases pass with a remaining count within the leases held, and the shared count ends equal to the requests made', async () => {
    const fresh = await createOrganization(app.db, 'Busy Recovery', 'ops@busy-recovery.example');
    const responses = await bursts(fresh.production_token, 4, 25);
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const remaining = responses.map((r) => Number(r.headers.get('ratelimit-remaining')));
    // A number given back by a lease may be handed out again, so two answers may show the same.
    expect(Math.max(...remaining)).toBeLessThan(LIMIT);
    expect(Math.min(...remaining)).toBeGreaterThanOrEqual(LIMIT - 2 * (LIMIT / 64) - responses.length);
    // Leases still held count ahead of the requests; what they did not use is given back when
    // they end (by now, on a slow machine, some may have ended already).
    expect(await counted(fresh.production_token)).toBeGreaterThanOrEqual(responses.length);
    await pause(LEASE_MS);
    for (let wait = 0; wait < 50 && (await counted(fresh.production_token)) !== responses.length; wait++) await pause(100);
    expect(await counted(fresh.production_token)).toBe(responses.length);
  });

  test(`a token revoked while its processes hold leases is refused by every process ${LEASE_MS} ms later`, async () => {
    const fresh = await createOrganization(app.db, 'Revoking Recovery', 'ops@revoking-recovery.example');
    const responses = await bursts(fresh.production_token, 2, 25);
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const renewed = await rotateToken(app.db, fresh.organization_id, 'production');
    await pause(LEASE_MS);
    for (const baseUrl of [app.baseUrl, secondBaseUrl]) {
      const { response, error } = await createApiClient({ baseUrl, token: fresh.production_token }).GET('/customers');
      expect(response.status).toBe(401);
      expect(error).toEqual({ error: expect.any(String), errorCode: 'unauthenticated' });
      expect((await createApiClient({ baseUrl, token: renewed! }).GET('/customers')).response.status).toBe(200);
    }
  });

  test('a sandbox token takes leases too, and a request right after its clock moved in the same process sees the new time; another process sees it once its lease ends', async () => {
    const fresh = await createOrganization(app.db, 'Sandbox Recovery', 'ops@sandbox-recovery.example');
    // Bursts until both processes hold a lease: the shared count is ahead of the requests made.
    let made = 0;
    for (let round = 0; round < 10 && (await counted(fresh.sandbox_token)) <= made; round++) {
      const responses = await bursts(fresh.sandbox_token, 2, 25);
      expect(responses.every((r) => r.status === 200)).toBe(true);
      made += responses.length;
    }
    expect(await counted(fresh.sandbox_token)).toBeGreaterThan(made);

    // Born in 10 days by the real clock: refused until the sandbox clock is 20 days ahead.
    const inTenDays = new Date(app.clock.now().getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    const born = (baseUrl: string, n: number) =>
      createApiClient({ baseUrl, token: fresh.sandbox_token }).POST('/customers', { body: { name: 'Ivy Chen', email: `ivy.chen.${n}@mail.debt-collection.example`, date_of_birth: inTenDays } });
    expect((await born(app.baseUrl, 1)).response.status).toBe(422);
    const client = createApiClient({ baseUrl: app.baseUrl, token: fresh.sandbox_token });
    const moved = await client.POST('/sandbox/clock', { body: { advance_to: new Date(app.clock.now().getTime() + 20 * 86_400_000).toISOString() } });
    expect(moved.response.status).toBe(200);
    expect((await born(app.baseUrl, 2)).response.status).toBe(201);
    await pause(LEASE_MS);
    expect((await born(secondBaseUrl, 3)).response.status).toBe(201);
  });

  test('past half the quota every request is counted alone: exactly the limit pass', async () => {
    const fresh = await createOrganization(app.db, 'Thrifty Recovery', 'ops@thrifty-recovery.example');
    // Most of the quota used in this window, as other processes' requests would have.
    await app.db.raw(`INSERT INTO rate_limits (key, points, expire) VALUES (?, ?, floor(extract(epoch FROM clock_timestamp()) * 1000) + 60000)`, [`api:${hashToken(fresh.production_token)}`, LIMIT - 30]);
    const responses = await bursts(fresh.production_token, 2, 20);
    expect(responses.filter((r) => r.status === 200)).toHaveLength(30);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(50);
  });
});
