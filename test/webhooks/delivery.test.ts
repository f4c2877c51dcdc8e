import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { signWebhookBody } from '../../client';
import type { WebhookWorker } from '../../server/webhooks/delivery-worker';
import { startTestApp, type TestApp } from '../support/test-app';
import { type Receiver, eventually, startTestWorker, webhookTestKit } from '../support/webhooks';

const SECRET = 'delivery_tests_secret_42';

// Creating webhooks on 127.0.0.1 needs insecure URLs; each test's worker has its own settings.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, webhookRetryDelaySeconds: 3600, webhookTimeoutMs: 5000 });
});
afterAll(async () => app?.stop());

const { after, receiver, worker, locationWebhook } = webhookTestKit(() => app);

/** A webhook for location.create at `url`; deleted after the test so later tests' events do not reach it. */
const webhook = async (url: string): Promise<string> => (await locationWebhook(url, SECRET)).id;

async function emitLocation(name = 'Lakeside Medical Center'): Promise<string> {
  return (await app.api.POST('/locations', { body: { name } })).data!.data.id;
}

const deliveryOf = (webhookId: string) => app.db('webhook_deliveries').where({ webhook_id: webhookId }).first();

describe('signature', () => {
  test('matches a vector computed with openssl', () => {
    // printf %s "$BODY" | openssl dgst -sha256 -hmac 'whsec_vector_0123456789abcdef'
    const body = '{"data":{"id":null,"name":"Maria Gonzalez","amount":12500}}';
    expect(signWebhookBody(body, 'whsec_vector_0123456789abcdef')).toBe('1545d18dbae7d9937ff3eea1f00b4cf75b7f7c264447035eeeb11ee252a7f1ba');
  });

  test('is the HMAC of the exact bytes on the wire, with the headers of the spec', async () => {
    const target = await receiver();
    const id = await webhook(target.url);
    await worker();
    const locationId = await emitLocation();
    const [hit] = await eventually(() => (target.received.length > 0 ? target.received : undefined), 'a delivery');
    expect(hit!.headers['x-service-signature-256']).toBe(createHmac('sha256', SECRET).update(hit!.raw).digest('hex'));
    expect(hit!.headers['x-service-event-name']).toBe('location.create');
    expect(hit!.headers['x-service-webhook-id']).toBe(id);
    expect(hit!.headers['content-type']).toBe('application/json');
    expect((hit!.body.data as { id: string }).id).toBe(locationId);
    expect(Object.keys(hit!.body)).toEqual(['data']);
    const row = await eventually(async () => ((await deliveryOf(id))?.delivered_at ? deliveryOf(id) : undefined), 'the delivery recorded');
    expect(hit!.headers['x-service-delivery-id']).toBe(row.id);
  });
});

describe('retries', () => {
  test('a failing endpoint gets 4 attempts, each at least the retry delay after the last, then the delivery fails; redeliver starts over', async () => {
    const target = await receiver((_request, response) => response.writeHead(503).end());
    const id = await webhook(target.url);
    await worker({ webhookRetryDelaySeconds: 1 });
    await emitLocation();
    const row = await eventually(async () => ((await deliveryOf(id))?.failed_at ? deliveryOf(id) : undefined), 'the delivery to fail');
    expect(row).toMatchObject({ attempts: 4, last_status_code: 503, last_error: 'answered 503', next_attempt_at: null, delivered_at: null });
    expect(target.received).toHaveLength(4);
    for (let i = 1; i < 4; i++) expect(target.received[i]!.at - target.received[i - 1]!.at).toBeGreaterThanOrEqual(950);

    const list = await app.api.GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
    expect(list.data!.data[0]).toMatchObject({ status: 'failed', attempts: 4, last_status_code: 503 });

    target.answer = (_request, response) => response.writeHead(204).end();
    const again = await app.api.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path: { id, delivery_id: row.id } } });
    expect(again.data!.data).toMatchObject({ status: 'pending', attempts: 0 });
    const done = await eventually(async () => ((await deliveryOf(id))?.delivered_at ? deliveryOf(id) : undefined), 'the redelivery');
    expect(done).toMatchObject({ attempts: 1, last_status_code: 204, last_error: null, failed_at: null });
    expect(target.received).toHaveLength(5);
    // One event to one webhook: every retry and the redelivery carry the delivery's id.
    expect(target.received.map((hit) => hit.headers['x-service-delivery-id'])).toEqual(Array(5).fill(row.id));
  });

  test('a test delivery keeps one X-Service-Delivery-ID across its retries; another test delivery has its own', async () => {
    const target = await receiver((_request, response, index) => response.writeHead(index === 0 ? 500 : 200).end());
    const id = await webhook(target.url);
    await worker({ webhookRetryDelaySeconds: 1 });
    await app.api.POST('/webhooks/trigger/{webhook_uuid}', { params: { path: { webhook_uuid: id } }, body: { events: ['location.create'] } });
    await eventually(() => target.received.length >= 2, 'the retry of the test delivery');
    await app.api.POST('/webhooks/trigger/{webhook_uuid}', { params: { path: { webhook_uuid: id } }, body: { events: ['location.create'] } });
    await eventually(() => target.received.length >= 3, 'the second test delivery');
    const ids = target.received.map((hit) => hit.headers['x-service-delivery-id']);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
  });

  test('a redirect is not followed and counts as a failure', async () => {
    const elsewhere = await receiver();
    const target = await receiver((_request, response) => response.writeHead(302, { Location: elsewhere.url }).end());
    const id = await webhook(target.url);
    await worker();
    await emitLocation();
    const row = await eventually(async () => ((await deliveryOf(id))?.attempts === 1 ? deliveryOf(id) : undefined), 'the first attempt');
    expect(row).toMatchObject({ last_status_code: 302, last_error: 'redirect (302) not followed', delivered_at: null, failed_at: null });
    expect(row.next_attempt_at).not.toBeNull();
    expect(elsewhere.received).toHaveLength(0);
  });

  test('no answer within WEBHOOK_TIMEOUT_MS is a failure', async () => {
    const held: ServerResponse[] = [];
    const target = await receiver((_request, response) => held.push(response));
    after(async () => held.forEach((response) => response.destroy()));
    const id = await webhook(target.url);
    await worker({ webhookTimeoutMs: 300 });
    await emitLocation();
    const row = await eventually(async () => ((await deliveryOf(id))?.attempts === 1 ? deliveryOf(id) : undefined), 'the first attempt');
    expect(row).toMatchObject({ last_status_code: null, last_error: 'no answer within 300 ms', delivered_at: null });
  });

  test('a restart in the middle of the retries still delivers', async () => {
    const target = await receiver((_request, response, index) => response.writeHead(index === 0 ? 500 : 200).end());
    const id = await webhook(target.url);
    const first = await startTestWorker(app, { webhookRetryDelaySeconds: 2 });
    await emitLocation();
    await eventually(async () => (await deliveryOf(id))?.attempts === 1, 'the first, failed attempt');
    // The process goes away while the retry waits in the queue; another one starts on the same database.
    await first.stop();
    await worker({ webhookRetryDelaySeconds: 2 });
    const row = await eventually(async () => ((await deliveryOf(id))?.delivered_at ? deliveryOf(id) : undefined), 'the retry after the restart');
    expect(row).toMatchObject({ attempts: 2, last_status_code: 200 });
    expect(target.received).toHaveLength(2);
  });
});

describe('the queue', () => {
  test('an attempt enqueued before jobs named their webhook is still fetched and delivered, beside one that names it', async () => {
    const target = await receiver();
    const id = await webhook(target.url);
    await emitLocation('Old Job Clinic');
    await emitLocation('New Job Clinic');
    // The first attempt's job as a process of the version before wrote it: no webhookId.
    const [older] = await app.db('pgboss.job').where({ name: 'webhook-delivery' }).whereRaw("data->>'webhookId' = ?", [id]).orderBy('created_on').limit(1).select('id');
    await app.db('pgboss.job').where({ name: 'webhook-delivery', id: older!.id }).update({ data: app.db.raw("data - 'webhookId'") });
    await worker();
    await eventually(async () => (await app.db('webhook_deliveries').where({ webhook_id: id }).whereNotNull('delivered_at')).length === 2, 'both deliveries');
    expect(target.received.map((hit) => (hit.body.data as { name: string }).name).sort()).toEqual(['New Job Clinic', 'Old Job Clinic']);
  });

  test("the worker's index is on the queue's partition and valid; the former one over the whole job table is gone", async () => {
    const { rows } = await app.db.raw<{ rows: { valid: boolean; table: string; partition: string }[] }>(
      `SELECT i.indisvalid AS valid, i.indrelid::regclass::text AS table, 'pgboss.' || q.partition_name AS partition
         FROM pg_index i, pgboss.queue q WHERE i.indexrelid = to_regclass('pgboss.dcs_webhook_job_due') AND q.name = 'webhook-delivery'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.valid).toBe(true);
    expect(rows[0]!.table).toBe(rows[0]!.partition);
    expect((await app.db.raw(`SELECT to_regclass('pgboss.dcs_job_webhook_due') AS former`)).rows[0].former).toBeNull();
  });
});

describe('isolation', () => {
  test('one slow endpoint holds no other: the fast one gets everything while the slow one holds at most its share', async () => {
    const held: ServerResponse[] = [];
    const slow = await receiver((_request, response) => held.push(response));
    const fast = await receiver();
    const slowId = await webhook(slow.url);
    await webhook(fast.url);
    await worker({ webhookTimeoutMs: 60_000 }, { concurrency: 4, perWebhook: 2 });
    for (let i = 0; i < 6; i++) await emitLocation(`Location ${i}`);
    await eventually(() => fast.received.length === 6, 'the fast endpoint to get all 6');
    expect(slow.received.length).toBeLessThanOrEqual(2);
    // Let the slow endpoint answer now, and from now on.
    slow.answer = (_request, response) => response.writeHead(200).end();
    held.forEach((response) => response.writeHead(200).end());
    await eventually(async () => {
      const rows = await app.db('webhook_deliveries').where({ webhook_id: slowId }).whereNotNull('delivered_at');
      return rows.length === 6;
    }, 'the slow endpoint to get all 6');
  });
});

describe('address checks at delivery time', () => {
  test.each([
    ['http', (port: string) => `http://127.0.0.1:${port}/hooks`, /^refused: not an https URL/],
    ['a loopback address', (port: string) => `https://127.0.0.1:${port}/hooks`, /^refused: 127\.0\.0\.1 is a loopback/],
    ['a name resolving to loopback', (port: string) => `https://localhost:${port}/hooks`, /^refused: localhost: .* is a loopback/],
  ])('with insecure URLs off, %s is refused without connecting', async (_label, url, error) => {
    const target = await receiver();
    const id = await webhook(url(new URL(target.url).port));
    await worker({ webhookAllowInsecureUrls: false });
    await emitLocation();
    const row = await eventually(async () => ((await deliveryOf(id))?.attempts === 1 ? deliveryOf(id) : undefined), 'the first attempt');
    expect(row.last_error).toMatch(error);
    expect(target.received).toHaveLength(0);
  });
});
