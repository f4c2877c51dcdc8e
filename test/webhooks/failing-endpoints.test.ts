/**
 * Endpoints that fail loudly: 410 disables at once, 429/503 with Retry-After wait without
 * spending an attempt, and an endpoint failing for 5 days is warned a day before and disabled,
 * on the app's clock.
 */
import type { ServerResponse } from 'node:http';
import { checkFailingWebhooks } from '../../server/webhooks/webhook-health';
import { startTestApp, type TestApp } from '../support/test-app';
import { type Received, type Receiver, eventually, webhookTestKit } from '../support/webhooks';

const SECRET = 'failing_endpoint_secret';
const DAY = 86_400_000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, webhookRetryDelaySeconds: 0, webhookDisableAfterDays: 5 });
});
afterAll(async () => app?.stop());

const { receiver, worker, locationWebhook } = webhookTestKit(() => app);

const webhook = (url: string) => locationWebhook(url, SECRET);

const emitLocation = () => app.api.POST('/locations', { body: { name: 'Lakeside Medical Center' } });
const read = async (id: string) => (await app.api.GET('/webhooks/{id}', { params: { path: { id } } })).data!.data;
const deliveryOf = (webhookId: string) => app.db('webhook_deliveries').where({ webhook_id: webhookId }).orderBy('created_at').first();

/** The e-mails queued so far to the organization (the e-mail worker is not running here). */
async function mails(): Promise<{ to: string; subject: string; text: string }[]> {
  const rows: { data: { to: string; subject: string; text: string } }[] = await app.db('pgboss.job').where({ name: 'email' }).orderBy('created_on').select('data');
  return rows.map((row) => row.data);
}

test('410 Gone disables the webhook at once, with a reason and a webhook.disabled e-mail; later events get no delivery', async () => {
  const target = await receiver((_request: Received, response: ServerResponse) => response.writeHead(410).end());
  const hook = await webhook(target.url);
  await worker();
  await emitLocation();
  await eventually(async () => (await read(hook.id)).status === 'disabled', 'the webhook disabled');
  expect(await read(hook.id)).toMatchObject({ status: 'disabled', disabled_reason: 'The endpoint answered 410 Gone.', disabled_at: expect.any(String) });
  expect(await deliveryOf(hook.id)).toMatchObject({ attempts: 1, last_status_code: 410, failed_at: expect.any(Date) });
  expect(target.received).toHaveLength(1);
  expect((await mails()).filter((mail) => mail.text.includes(hook.id))).toEqual([expect.objectContaining({ subject: expect.stringContaining('webhook.disabled') })]);

  await emitLocation();
  expect(await app.db('webhook_deliveries').where({ webhook_id: hook.id }).count<{ count: string }[]>({ count: '*' })).toEqual([{ count: '1' }]);

  // PUT with status enabled turns it back on.
  const enabled = await app.api.PUT('/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url: hook.url, status: 'enabled' } });
  expect(enabled.data!.data).toMatchObject({ status: 'enabled', disabled_reason: null, disabled_at: null });
});

test.each([
  [429, '120', 120],
  [503, '7200', 3600],
])('%i with Retry-After %s waits that long (at most an hour) without spending an attempt', async (status, retryAfter, seconds) => {
  const target = await receiver((_request: Received, response: ServerResponse) => response.writeHead(status, { 'Retry-After': retryAfter }).end());
  const hook = await webhook(target.url);
  await worker();
  await emitLocation();
  const row = await eventually(async () => ((await deliveryOf(hook.id))?.last_status_code === status ? deliveryOf(hook.id) : undefined), 'the answer recorded');
  expect(row).toMatchObject({ attempts: 0, last_status_code: status, failed_at: null, delivered_at: null });
  const waits = (row.next_attempt_at.getTime() - Date.now()) / 1000;
  expect(waits).toBeGreaterThan(seconds - 30);
  expect(waits).toBeLessThanOrEqual(seconds + 1);
  expect(target.received).toHaveLength(1);
});

test('a 503 without Retry-After is an ordinary failed attempt', async () => {
  const target = await receiver((_request: Received, response: ServerResponse) => response.writeHead(503).end());
  const hook = await webhook(target.url);
  await worker();
  await emitLocation();
  const row = await eventually(async () => ((await deliveryOf(hook.id))?.failed_at ? deliveryOf(hook.id) : undefined), 'the delivery to fail');
  expect(row.attempts).toBe(4);
});

test('every attempt failing for 5 days: a warning e-mail a day before, then disabled with a webhook.disabled e-mail; a success clears it', async () => {
  let ok = false;
  const target = await receiver((_request: Received, response: ServerResponse) => response.writeHead(ok ? 200 : 500).end());
  const hook = await webhook(target.url);
  await worker();
  const start = app.clock.now();
  await emitLocation();
  await eventually(async () => (await deliveryOf(hook.id))?.failed_at, 'the delivery to fail');
  const failing = await app.db('webhooks').where({ id: hook.id }).first('failing_since');
  expect(failing.failing_since).toEqual(start);
  const about = async () => (await mails()).filter((mail) => mail.text.includes(hook.id)).map((mail) => mail.subject);
  const check = async (days: number) => {
    app.clock.set(new Date(start.getTime() + days * DAY));
    return checkFailingWebhooks(app.deps);
  };

  expect(await check(4 - 1 / 1440)).toEqual({ warned: [], disabled: [] });
  expect(await check(4)).toEqual({ warned: [hook.id], disabled: [] });
  expect(await about()).toEqual([`Your webhook ${hook.id} will be disabled in 24 hours`]);
  expect(await check(4.5)).toEqual({ warned: [], disabled: [] });
  expect((await read(hook.id)).status).toBe('enabled');
  expect(await check(5)).toEqual({ warned: [], disabled: [hook.id] });
  expect(await read(hook.id)).toMatchObject({ status: 'disabled', disabled_reason: 'Every attempt failed for 5 days.' });
  expect(await about()).toEqual([`Your webhook ${hook.id} will be disabled in 24 hours`, `webhook.disabled: your webhook ${hook.id} was disabled`]);

  // Enabled again, it starts afresh: a success clears the failing period.
  await app.api.PUT('/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url: hook.url, status: 'enabled' } });
  ok = true;
  await emitLocation();
  await eventually(async () => (await app.db('webhook_deliveries').where({ webhook_id: hook.id }).whereNotNull('delivered_at').first()) ?? undefined, 'a delivery');
  expect((await app.db('webhooks').where({ id: hook.id }).first('failing_since')).failing_since).toBeNull();
  expect(await check(20)).toEqual({ warned: [], disabled: [] });
});
