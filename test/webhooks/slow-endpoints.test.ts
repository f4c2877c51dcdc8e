/**
 * One slow endpoint never delays another (delivery-lanes.ts): while one webhook's endpoint
 * holds every attempt without answering, another webhook subscribed to the same events gets
 * all of them; the slow one is put in the slow lane, its waiting attempts left in the queue;
 * once it answers again it gets every delivery, each once.
 */
import type { ServerResponse } from 'node:http';
import { startTestApp, type TestApp } from '../support/test-app';
import { type Received, type Receiver, eventually, webhookTestKit } from '../support/webhooks';

const SECRET = 'slow_endpoint_secret_123';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
});
afterAll(async () => app?.stop());

const { receiver, worker, locationWebhook } = webhookTestKit(() => app);

const webhook = (url: string) => locationWebhook(url, SECRET);

const emitLocations = async (count: number) => {
  for (let i = 0; i < count; i++) await app.api.POST('/locations', { body: { name: `Clinic ${i}` } });
};
const ids = (target: Receiver) => target.received.map((request: Received) => String(request.headers['webhook-id']));

test('an endpoint that does not answer holds its own attempts only: the other gets every event, the slow one all of them once it answers', async () => {
  // The slow endpoint keeps every request open until released.
  const held: ServerResponse[] = [];
  let answering = false;
  const slowTarget = await receiver((_request: Received, response: ServerResponse) => {
    if (answering) response.writeHead(200).end();
    else held.push(response);
  });
  const fastTarget = await receiver();
  const slow = await webhook(slowTarget.url);
  const fast = await webhook(fastTarget.url);
  await worker({ webhookTimeoutMs: 30_000 }, { concurrency: 8, perWebhook: 2, pollIntervalMs: 50 });

  await emitLocations(10);
  await eventually(() => fastTarget.received.length === 10, 'the fast endpoint to get every event');
  // The slow one has only its own two slots' worth, unanswered.
  expect(slowTarget.received.length).toBeLessThanOrEqual(2);
  expect(held.length).toBe(slowTarget.received.length);

  // Holding all its slots for more than a second, it goes to the slow lane.
  await eventually(async () => {
    const row = await app.db('webhooks').where({ id: slow.id }).first(app.db.raw('slow_until > now() AS slow'));
    return row.slow === true;
  }, 'the slow webhook in the slow lane');
  expect((await app.db('webhooks').where({ id: fast.id }).first('slow_until')).slow_until).toBeNull();

  // New events meanwhile: the fast endpoint gets them too, the slow one's wait behind.
  await emitLocations(5);
  await eventually(() => fastTarget.received.length === 15, 'the fast endpoint to get the later events');
  // What waits is the slow one's only, and it still has only its two unanswered requests.
  const waiting: { webhook_id: string }[] = await app.db('pgboss.job as j')
    .join('webhook_deliveries as d', app.db.raw("d.id::text = j.data->>'deliveryId'"))
    .where('j.name', 'webhook-delivery')
    .where('j.state', '<', 'active')
    .select('d.webhook_id');
  expect(waiting.length).toBeGreaterThan(0);
  expect(waiting.every((job) => job.webhook_id === slow.id)).toBe(true);
  expect(slowTarget.received.length).toBeLessThanOrEqual(2);

  // It answers again: every delivery arrives, each once.
  answering = true;
  for (const response of held.splice(0)) response.writeHead(200).end();
  await eventually(async () => {
    const left = await app.db('webhook_deliveries').where({ webhook_id: slow.id }).whereNull('delivered_at').count<{ count: string }[]>({ count: '*' });
    return Number(left[0]!.count) === 0;
  }, 'every delivery to the slow endpoint', 60_000);
  expect(new Set(ids(slowTarget)).size).toBe(15);
  expect(new Set(ids(fastTarget)).size).toBe(15);
  expect(fastTarget.received).toHaveLength(15);
});
