/**
 * Standard Webhooks on the wire: the headers of every delivery, a receiver that refuses a
 * replay, a generated secret, and rotation with both secrets for the grace period.
 */
import type { ServerResponse } from 'node:http';
import { verifyWebhook } from '../../client';
import { startTestApp, type TestApp } from '../support/test-app';
import { type Received, type Receiver, eventually, webhookTestKit } from '../support/webhooks';

const SECRET = 'standard_webhooks_secret_42';
const HOUR = 3_600_000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, webhookRetryDelaySeconds: 3600, webhookSecretGraceHours: 24 });
});
afterAll(async () => app?.stop());

const { receiver, worker, locationWebhook } = webhookTestKit(() => app);

const webhook = locationWebhook;

const emitLocation = async () => (await app.api.POST('/locations', { body: { name: 'Lakeside Medical Center' } })).data!.data.id;

/** The n-th delivery the receiver got (waiting for it). */
const nth = (target: Receiver, n: number) => eventually(() => target.received[n], `delivery ${n + 1}`);

/**
 * A receiver as an integrator writes one: verifyWebhook with its own clock, 400 when it fails.
 * Its clock is real time plus `skewMs`, so a test replays a captured delivery "later".
 */
function verifyingAnswer(secret: string, clock: { skewMs: number }) {
  return (request: Received, response: ServerResponse) => {
    const ok = verifyWebhook(request.raw, request.headers, secret, { now: () => new Date(Date.now() + clock.skewMs) });
    response.writeHead(ok ? 200 : 400).end();
  };
}

describe('headers', () => {
  test('webhook-id is the delivery id, webhook-timestamp is the attempt\'s time, webhook-signature verifies', async () => {
    const target = await receiver();
    const hook = await webhook(target.url, SECRET);
    await worker();
    const before = Math.floor(Date.now() / 1000);
    await emitLocation();
    const hit = await nth(target, 0);
    expect(hit.headers['webhook-id']).toBe(hit.headers['x-service-delivery-id']);
    const row = await app.db('webhook_deliveries').where({ webhook_id: hook.id }).first();
    expect(hit.headers['webhook-id']).toBe(row.id);
    expect(Number(hit.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(before);
    expect(Number(hit.headers['webhook-timestamp'])).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(hit.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyWebhook(hit.raw, hit.headers, SECRET)).toBe(true);
    expect(verifyWebhook(hit.raw, hit.headers, 'another_secret_of_16+')).toBe(false);
  });

  test('a receiver refuses a captured delivery replayed more than 5 minutes later, and takes it within 5 minutes', async () => {
    const clock = { skewMs: 0 };
    const target = await receiver(verifyingAnswer(SECRET, clock));
    await webhook(target.url, SECRET);
    await worker();
    await emitLocation();
    const captured = await nth(target, 0);
    await eventually(async () => (await app.db('webhook_deliveries').whereNotNull('delivered_at').where('id', captured.headers['webhook-id']).first()) ?? undefined, 'the delivery accepted');

    const replay = (skewMs: number) => {
      clock.skewMs = skewMs;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-service-signature-256']) headers[name] = String(captured.headers[name]);
      return fetch(target.url, { method: 'POST', headers, body: captured.raw });
    };
    expect((await replay(4 * 60_000)).status).toBe(200);
    expect((await replay(5 * 60_000 + 2000)).status).toBe(400);
    expect((await replay(-(5 * 60_000 + 2000))).status).toBe(400);
  });
});

describe('a secret the service generates', () => {
  test('is answered once as a whsec_ secret and signs the deliveries', async () => {
    const target = await receiver();
    const created = await webhook(target.url);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await app.api.GET('/webhooks/{id}', { params: { path: { id: created.id } } });
    expect(JSON.stringify(read.data)).not.toContain(created.secret!);
    expect(read.data!.data).not.toHaveProperty('secret');
    await worker();
    await emitLocation();
    const hit = await nth(target, 0);
    expect(verifyWebhook(hit.raw, hit.headers, created.secret!)).toBe(true);
  });

  test('a given secret is not echoed', async () => {
    const created = await webhook('http://127.0.0.1:9/given', SECRET);
    expect(created).not.toHaveProperty('secret');
  });

  test.each([
    ['not base64 after whsec_', 'whsec_this is not base64!'],
    ['fewer than 24 bytes', `whsec_${Buffer.alloc(16, 1).toString('base64')}`],
  ])('a whsec_ secret %s is a 422 on secret, and nothing is created', async (_label, secret) => {
    const before = await app.db('webhooks').count<{ count: string }[]>({ count: '*' });
    const { response, error } = await app.api.POST('/webhooks', { body: { url: 'http://127.0.0.1:9/bad-secret', events: ['location.create'], secret } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errorCode: 'validation_failed', errors: { secret: [expect.stringContaining('whsec_')] } });
    expect(await app.db('webhooks').count<{ count: string }[]>({ count: '*' })).toEqual(before);
  });
});

describe('rotation', () => {
  test('deliveries verify under both secrets for the grace period, then only under the new one', async () => {
    const target = await receiver();
    const hook = await webhook(target.url, SECRET);
    await worker();

    const rotated = await app.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } }, body: {} });
    expect(rotated.response.status).toBe(200);
    const fresh = rotated.data!.data.secret;
    expect(fresh).toMatch(/^whsec_/);
    const rotatedAt = app.clock.now();
    expect(rotated.data!.data.secret_rotated_at).toBe(rotatedAt.toISOString());
    expect(rotated.data!.data.previous_secret_expires_at).toBe(new Date(rotatedAt.getTime() + 24 * HOUR).toISOString());
    const read = await app.api.GET('/webhooks/{id}', { params: { path: { id: hook.id } } });
    expect(read.data!.data.secret_rotated_at).toBe(rotatedAt.toISOString());
    expect(JSON.stringify(read.data)).not.toContain(fresh);

    await emitLocation();
    const during = await nth(target, 0);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(during.raw, during.headers, fresh)).toBe(true);
    expect(verifyWebhook(during.raw, during.headers, SECRET)).toBe(true);

    // The last second of the grace: still both.
    app.clock.advance(24 * HOUR - 1000);
    await emitLocation();
    const last = await nth(target, 1);
    expect(verifyWebhook(last.raw, last.headers, SECRET)).toBe(true);

    app.clock.advance(1000);
    await emitLocation();
    const after = await nth(target, 2);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWebhook(after.raw, after.headers, fresh)).toBe(true);
    expect(verifyWebhook(after.raw, after.headers, SECRET)).toBe(false);
  });

  test('a rotation within the grace of another replaces the pending old secret; a given secret is used', async () => {
    const target = await receiver();
    const hook = await webhook(target.url, SECRET);
    await worker();
    const second = 'second_secret_of_16_chars';
    const third = 'third_secret_of_16_chars!';
    await app.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } }, body: { secret: second } });
    const again = await app.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } }, body: { secret: third } });
    expect(again.data!.data.secret).toBe(third);
    await emitLocation();
    const hit = await nth(target, 0);
    expect(verifyWebhook(hit.raw, hit.headers, third)).toBe(true);
    expect(verifyWebhook(hit.raw, hit.headers, second)).toBe(true);
    expect(verifyWebhook(hit.raw, hit.headers, SECRET)).toBe(false);
  });

  test('an unknown webhook is a 404; a too short secret a 422', async () => {
    const unknown = await app.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } }, body: {} });
    expect(unknown.response.status).toBe(404);
    const hook = await webhook('http://127.0.0.1:9/short', SECRET);
    const short = await app.api.POST('/webhooks/{id}/rotate-secret', { params: { path: { id: hook.id } }, body: { secret: 'fifteen_chars!!' } });
    expect(short.response.status).toBe(422);
    expect(short.error).toMatchObject({ errors: { secret: [expect.any(String)] } });
  });
});
