import type { Schemas } from '../../client';
import { createOrganization } from '../../server/organizations/organization-repo';
import { expectFieldError, UNKNOWN_UUID } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

// Insecure URLs off, as in production: only https, nothing inside our network.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: false });
});
afterAll(async () => app?.stop());

const SECRET = 'wh_sec_9fK2mQ7xLp4vR8tZ';
let hostSequence = 0;
/** A public address literal, so that no DNS is needed; each test its own path (urls are unique). */
const publicUrl = () => `https://93.184.216.34/hooks/${++hostSequence}`;

async function newWebhook(body: Partial<Schemas['WebhookCreate']> = {}) {
  const { data, response, error } = await app.api.POST('/webhooks', {
    body: { url: publicUrl(), events: ['customer.create'], secret: SECRET, ...body },
  });
  if (response.status !== 201) throw new Error(`webhook create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

describe('POST /webhooks', () => {
  test('creates a webhook and answers it without the secret', async () => {
    const url = publicUrl();
    const { data, response } = await app.api.POST('/webhooks', { body: { url, events: ['customer.create', 'debt-account.update'], secret: SECRET } });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({ url, events: ['customer.create', 'debt-account.update'] });
    expect(JSON.stringify(data)).not.toContain(SECRET);
  });

  test('stores the secret sealed, never in the clear', async () => {
    const webhook = await newWebhook();
    const row = await app.db('webhooks').where({ id: webhook.id }).first('secret_sealed');
    expect(row.secret_sealed).not.toContain(SECRET);
    expect(app.secrets.decrypt(row.secret_sealed)).toBe(SECRET);
  });

  test('when the secret has 15 characters, answers 422 on secret', async () => {
    const { error, response } = await app.api.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.create'], secret: 'x'.repeat(15) } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'secret');
  });

  test('when an event is not in the catalogue, answers 422', async () => {
    const { response } = await app.api.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.created'], secret: SECRET } as never });
    expect(response.status).toBe(422);
  });

  test('when the url is http, answers 422 on url', async () => {
    const { error, response } = await app.api.POST('/webhooks', { body: { url: 'http://93.184.216.34/hooks', events: ['customer.create'], secret: SECRET } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'url');
  });

  test.each([
    ['loopback', 'https://127.0.0.1/hooks'],
    ['private', 'https://10.0.0.1/hooks'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data'],
    ['IPv6 loopback', 'https://[::1]/hooks'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hooks'],
    ['a name resolving to loopback', 'https://localhost:8443/hooks'],
  ])('when the url is %s, answers 422 on url', async (_label, url) => {
    const { error, response } = await app.api.POST('/webhooks', { body: { url, events: ['customer.create'], secret: SECRET } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'url');
  });

  test('when another webhook of the tenant has the url, answers 422 on url; another tenant may use it', async () => {
    const webhook = await newWebhook();
    const { error, response } = await app.api.POST('/webhooks', { body: { url: webhook.url, events: ['customer.create'], secret: SECRET } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'url');
    const other = await app.other.POST('/webhooks', { body: { url: webhook.url, events: ['customer.create'], secret: SECRET } });
    expect(other.response.status).toBe(201);
  });
});

describe('GET, PUT, DELETE /webhooks/{id}', () => {
  test('PUT replaces url, secret and the whole events list', async () => {
    const webhook = await newWebhook({ events: ['customer.create', 'customer.update'] });
    const url = publicUrl();
    const { data, response } = await app.api.PUT('/webhooks/{id}', {
      params: { path: { id: webhook.id } },
      body: { url, secret: 'another_secret_16+', events: ['location.delete'] },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ id: webhook.id, url, events: ['location.delete'] });
    const row = await app.db('webhooks').where({ id: webhook.id }).first('secret_sealed');
    expect(app.secrets.decrypt(row.secret_sealed)).toBe('another_secret_16+');
  });

  test('PUT without events keeps the list', async () => {
    const webhook = await newWebhook({ events: ['customer.create', 'customer.update'] });
    const { data } = await app.api.PUT('/webhooks/{id}', { params: { path: { id: webhook.id } }, body: { url: webhook.url, secret: SECRET } });
    expect(data!.data.events).toEqual(['customer.create', 'customer.update']);
  });

  test('PUT checks the url like POST', async () => {
    const webhook = await newWebhook();
    const { error, response } = await app.api.PUT('/webhooks/{id}', { params: { path: { id: webhook.id } }, body: { url: 'https://10.0.0.1/x', secret: SECRET } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'url');
  });

  test('GET and the list answer the webhook without its secret; another tenant gets 404', async () => {
    const webhook = await newWebhook();
    const one = await app.api.GET('/webhooks/{id}', { params: { path: { id: webhook.id } } });
    expect(one.data!.data).toEqual(webhook);
    const list = await app.api.GET('/webhooks', { params: { query: { limit: 500 } } });
    expect(list.data!.data.map((item) => item.id)).toContain(webhook.id);
    expect(JSON.stringify(list.data)).not.toContain(SECRET);
    expect((await app.other.GET('/webhooks/{id}', { params: { path: { id: webhook.id } } })).response.status).toBe(404);
    expect((await app.sandbox.GET('/webhooks/{id}', { params: { path: { id: webhook.id } } })).response.status).toBe(404);
  });

  test('the list pages like every other list: page and limit in, data, meta and links out, oldest first', async () => {
    const organization = await createOrganization(app.db, 'Paging Hooks LLC', 'ops@paging-hooks.example');
    const client = app.clientFor(organization.production_token);
    const created = [];
    for (let i = 0; i < 3; i++) {
      const { data } = await client.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.create'], secret: SECRET } });
      created.push(data!.data.id);
    }
    const { data, response } = await client.GET('/webhooks', { params: { query: { page: 2, limit: 2 } } });
    expect(response.status).toBe(200);
    expect(data!.data.map((item) => item.id)).toEqual([created[2]]);
    expect(data!.meta).toMatchObject({ current_page: 2, from: 3, to: 3, last_page: 2, per_page: 2, total: 3 });
    expect(data!.links.prev).toMatch(/\/webhooks\?limit=2&page=1$/);
    expect(data!.links.next).toBeNull();
    const tooMany = await client.GET('/webhooks', { params: { query: { limit: 501 } } });
    expect(tooMany.response.status).toBe(422);
    expectFieldError(tooMany.error, 'query.limit');
  });

  test('DELETE removes the webhook; then 404', async () => {
    const webhook = await newWebhook();
    const { data } = await app.api.DELETE('/webhooks/{id}', { params: { path: { id: webhook.id } } });
    expect(data).toEqual({ success: true });
    expect((await app.api.GET('/webhooks/{id}', { params: { path: { id: webhook.id } } })).response.status).toBe(404);
    expect((await app.api.DELETE('/webhooks/{id}', { params: { path: { id: webhook.id } } })).response.status).toBe(404);
  });

  test('a path id that is not a UUID answers 422', async () => {
    expect((await app.api.GET('/webhooks/{id}', { params: { path: { id: 'nope' } } })).response.status).toBe(422);
  });
});

describe('POST /webhooks/trigger', () => {
  test('answers which url got which events, and the events nobody subscribes to', async () => {
    const client = app.sandbox;
    const first = (await client.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.create', 'charge.succeeded'], secret: SECRET } })).data!.data;
    const second = (await client.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.login.success'], secret: SECRET } })).data!.data;
    const { data, response } = await client.POST('/webhooks/trigger', { body: { events: ['customer.create', 'customer.login.success', 'ticket.create'] } });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      dispatched: { [first.url]: ['customer.create'], [second.url]: ['customer.login.success'] },
      not_dispatched: ['ticket.create'],
    });
  });

  test('stores nothing: no outbox event, no delivery row', async () => {
    const webhook = await newWebhook({ events: ['import.complete'] });
    const before = await app.db('webhook_events').count<{ count: string }[]>({ count: '*' });
    await app.api.POST('/webhooks/trigger/{webhook_uuid}', { params: { path: { webhook_uuid: webhook.id } }, body: { events: ['import.complete'] } });
    const after = await app.db('webhook_events').count<{ count: string }[]>({ count: '*' });
    expect(after[0]!.count).toBe(before[0]!.count);
    expect(await app.db('webhook_deliveries').where({ webhook_id: webhook.id }).first()).toBeUndefined();
  });

  test('for one webhook, answers its url with the events it subscribes to', async () => {
    const webhook = await newWebhook({ events: ['customer.create', 'location.update'] });
    const { data } = await app.api.POST('/webhooks/trigger/{webhook_uuid}', {
      params: { path: { webhook_uuid: webhook.id } },
      body: { events: ['location.update', 'ticket.update'] },
    });
    expect(data).toEqual({ dispatched: { [webhook.url]: ['location.update'] }, not_dispatched: ['ticket.update'] });
  });

  test('for an unknown webhook, answers 404', async () => {
    const { response } = await app.api.POST('/webhooks/trigger/{webhook_uuid}', { params: { path: { webhook_uuid: UNKNOWN_UUID } }, body: { events: ['customer.create'] } });
    expect(response.status).toBe(404);
  });
});

describe('GET /webhooks/{id}/deliveries and redeliver', () => {
  test('lists one pending delivery per subscribed event, newest first', async () => {
    const webhook = await newWebhook({ events: ['customer.create', 'customer.update'] });
    const { data: created } = await app.api.POST('/customers', { body: { name: 'Dana Whitfield', email: 'dana@mail.debt-collection.example' } });
    await app.api.PUT('/customers/{id}', { params: { path: { id: created!.data.id } }, body: { phone: '(512) 555-0147' } });
    const { data, response } = await app.api.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhook.id }, query: { limit: 10 } } });
    expect(response.status).toBe(200);
    expect(data!.data.map((delivery) => delivery.event)).toEqual(['customer.update', 'customer.create']);
    expect(data!.data[0]).toMatchObject({ status: 'pending', attempts: 0, delivered_at: null, failed_at: null });
    expect(data!.meta.total).toBe(2);
  });

  test('redelivering a pending delivery answers 409; an unknown one 404', async () => {
    const webhook = await newWebhook({ events: ['location.create'] });
    await app.api.POST('/locations', { body: { name: 'Lakeside Medical Center' } });
    const { data } = await app.api.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhook.id } } });
    const delivery = data!.data[0]!;
    const path = { id: webhook.id, delivery_id: delivery.id };
    expect((await app.api.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path } })).response.status).toBe(409);
    const unknown = { id: webhook.id, delivery_id: UNKNOWN_UUID };
    expect((await app.api.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path: unknown } })).response.status).toBe(404);
  });

  test("another tenant's webhook answers 404", async () => {
    const webhook = await newWebhook();
    const { response } = await app.other.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhook.id } } });
    expect(response.status).toBe(404);
  });
});

describe('events nobody subscribes to', () => {
  test('are recorded in the event log all the same, and queue deliveries only for the webhooks that subscribe', async () => {
    const fresh = await createOrganization(app.db, 'Quiet Recovery', 'ops@quiet-recovery.example');
    const client = app.clientFor(fresh.production_token);
    const logged = async () => ((await client.GET('/events', { params: { query: { limit: 100 } } })).data!.data.map((event) => event.type)).reverse();

    const customer = (await client.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy.chen@mail.debt-collection.example' } })).data!.data;
    expect(await logged()).toEqual(['customer.create']);

    const hook = await client.POST('/webhooks', { body: { url: publicUrl(), events: ['customer.update'], secret: SECRET } });
    expect(hook.response.status).toBe(201);
    await client.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Ivy Chen-Park' } });
    await client.POST('/locations', { body: { name: 'Lakeside Medical Center' } });
    expect(await logged()).toEqual(['customer.create', 'customer.update', 'location.create']);
    const deliveries = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id: hook.data!.data.id } } });
    expect(deliveries.data!.data.map((delivery) => delivery.event)).toEqual(['customer.update']);
  });
});
