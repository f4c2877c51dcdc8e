/**
 * Webhook deliveries in flight when a server process is killed (SIGKILL: nothing is recorded,
 * nothing is released) all arrive once another process runs on the same database: the lease
 * of each attempt lapses and the attempt is sent again. A resent attempt carries the same
 * X-Service-Delivery-ID as the first, so a receiver can tell the repeat.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '../../server/db/database';
import { createOrganization } from '../../server/organizations/organization-repo';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually, startReceiver } from '../support/webhooks';

const EVENTS = 200;
const TIMEOUT_MS = 2000;
const LEASE_MARGIN_SECONDS = 5;

const serve = (databaseUrl: string, key: string) =>
  startServerProcess(databaseUrl, {
    DATA_ENCRYPTION_KEY: key,
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_DELAY_SECONDS: '1',
    // The lease is the timeout and this margin: 7 s, not 32, before the killed process's
    // attempts are sent again.
    WEBHOOK_LEASE_MARGIN_SECONDS: String(LEASE_MARGIN_SECONDS),
  });

test('deliveries in flight at a kill -9 all arrive after the restart, a resend under the same delivery id', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const key = randomBytes(32).toString('base64');
  const children: Spawned[] = [];
  // Each answer takes a while, so that many attempts are in flight when the server dies.
  const receiver = await startReceiver((_request, response) => void setTimeout(() => response.writeHead(200).end(), 400));
  try {
    const organization = await createOrganization(db, 'Crash Test Agency');
    const { server: first, port: firstPort } = await serve(database.url, key);
    children.push(first);
    const api = processClient(firstPort, organization.production_token);
    const hook = await api.POST('/webhooks', { body: { url: receiver.url, events: ['location.create'], secret: 'crash_test_secret_0123' } });
    expect(hook.response.status).toBe(201);
    for (let i = 0; i < EVENTS; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => api.POST('/locations', { body: { name: `Clinic ${i + j}` } })));
    }

    await eventually(() => receiver.received.length >= 20, 'attempts in flight');
    first.child.kill('SIGKILL');
    await first.exited;
    const killedAt = Date.now();
    await expect(fetch(`http://127.0.0.1:${firstPort}/health`)).rejects.toThrow();
    const unrecorded = await db('webhook_deliveries').whereNull('delivered_at').count<{ count: string }[]>({ count: '*' });
    expect(Number(unrecorded[0]!.count)).toBeGreaterThan(0);

    children.push((await serve(database.url, key)).server);
    const pending = () => db('webhook_deliveries').whereNull('delivered_at').count<{ count: string }[]>({ count: '*' });
    await eventually(async () => Number((await pending())[0]!.count) === 0, 'every delivery recorded', 90_000);
    const recoveredMs = Date.now() - killedAt;

    const rows: { id: string; location_id: string }[] = await db('webhook_deliveries')
      .join('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select('webhook_deliveries.id', 'webhook_events.object_id as location_id');
    expect(rows).toHaveLength(EVENTS);
    const locationOf = new Map(rows.map((row) => [row.id, row.location_id]));
    const seen = new Map<string, number>();
    for (const hit of receiver.received) {
      const deliveryId = String(hit.headers['x-service-delivery-id']);
      // A repeat is the same delivery: same id, same event.
      expect((hit.body.data as { id: string }).id).toBe(locationOf.get(deliveryId));
      seen.set(deliveryId, (seen.get(deliveryId) ?? 0) + 1);
    }
    expect([...seen.keys()].sort()).toEqual([...locationOf.keys()].sort());
    const repeats = receiver.received.length - seen.size;
    console.log(`webhook crash: ${EVENTS} events, ${receiver.received.length} requests received (${repeats} repeats), all recorded ${(recoveredMs / 1000).toFixed(1)} s after the kill`);
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await receiver.close();
    await db.destroy();
    await database.drop();
  }
}, 180_000);
