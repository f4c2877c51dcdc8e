/**
 * The event log (GET /events) and recovery: a 24-hour outage of an endpoint, on the sandbox
 * clock, delivered again in order with no webhook-id twice; and the order of one object's
 * deliveries.
 */
import type { ServerResponse } from 'node:http';
import { startTestApp, type TestApp } from '../support/test-app';
import { advanceSandbox, sandboxNow } from '../support/sandbox-clock';
import { type Received, type Receiver, eventually, webhookTestKit } from '../support/webhooks';
import { createOrganization } from '../../server/organizations/organization-repo';

const SECRET = 'recovery_tests_secret_42';
const HOUR = 3_600_000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, webhookRetryDelaySeconds: 0, eventRetentionDays: 30 });
});
afterAll(async () => app?.stop());

const { after, receiver, worker } = webhookTestKit(() => app);

/** A fresh organization's sandbox, so that its clock and log are the test's own. */
async function freshSandbox() {
  const organization = await createOrganization(app.db, `Recovery ${Math.random()}`, 'ops@recovery.example');
  return app.clientFor(organization.sandbox_token);
}

describe('GET /events', () => {
  test('lists every event newest first with its object and sequence, and filters by type, prefix, object and time', async () => {
    const api = await freshSandbox();
    const customer = (await api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy@mail.example' } })).data!.data;
    await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Ivy Chen-Park' } });
    const location = (await api.POST('/locations', { body: { name: 'Lakeside Medical Center' } })).data!.data;

    const all = await api.GET('/events');
    expect(all.response.status).toBe(200);
    expect(all.data!.data.map((event) => event.type)).toEqual(['location.create', 'customer.update', 'customer.create']);
    expect(all.data!.meta.total).toBe(3);
    const [created, updated] = [all.data!.data[2]!, all.data!.data[1]!];
    expect(created.object_id).toBe(customer.id);
    expect(updated.sequence).toBeGreaterThan(created.sequence);
    expect(updated.data).toMatchObject({ id: customer.id, name: 'Ivy Chen-Park' });
    expect(updated.occurred_at).toBe(updated.created_at);

    const byType = async (type: string) => (await api.GET('/events', { params: { query: { type } } })).data!.data.map((event) => event.type);
    expect(await byType('customer.update')).toEqual(['customer.update']);
    expect(await byType('customer.*')).toEqual(['customer.update', 'customer.create']);
    const byObject = await api.GET('/events', { params: { query: { object_id: location.id } } });
    expect(byObject.data!.data.map((event) => event.type)).toEqual(['location.create']);

    const now = await sandboxNow(api);
    const later = await api.GET('/events', { params: { query: { created_gte: new Date(now.getTime() + 1000).toISOString() } } });
    expect(later.data!.data).toEqual([]);
    const earlier = await api.GET('/events', { params: { query: { created_lt: new Date(now.getTime() + 1000).toISOString() } } });
    expect(earlier.data!.data).toHaveLength(3);

    const one = await api.GET('/events/{id}', { params: { path: { id: created.id } } });
    expect(one.data!.data).toEqual(created);
    // Another organization's event, and the same organization's production, do not see it.
    expect((await app.api.GET('/events/{id}', { params: { path: { id: created.id } } })).response.status).toBe(404);
  });

  test.each([
    ['an unknown name', { type: 'customer.created' }, 'query.type'],
    ['a prefix no name starts with', { type: 'invoice.*' }, 'query.type'],
    ['a malformed type', { type: 'customer.*.update' }, 'query.type'],
    ['a time that is not a date-time', { created_gte: 'yesterday' }, 'query.created_gte'],
    ['created_lt not after created_gte', { created_gte: '2026-11-20T00:00:00Z', created_lt: '2026-11-20T00:00:00Z' }, 'query.created_lt'],
    ['an object_id that is not a UUID', { object_id: 'CUST-1' }, 'query.object_id'],
  ])('%s is a 422 on its parameter', async (_label, query, field) => {
    const { response, error } = await app.api.GET('/events', { params: { query: query as never } });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toContain(field);
  });
});

describe('recovery', () => {
  test('a 24-hour outage: what failed and what came while disabled is delivered again in order, keeping webhook-ids, never twice', async () => {
    const api = await freshSandbox();
    let down = true;
    const accepted: Received[] = [];
    const target = await receiver((request: Received, response: ServerResponse) => {
      if (down) return response.writeHead(500).end();
      accepted.push(request);
      response.writeHead(200).end();
    });
    const hook = (await api.POST('/webhooks', { body: { url: target.url, events: ['customer.create', 'customer.update'], secret: SECRET } })).data!.data;
    await worker();
    const start = await sandboxNow(api);

    // Before the outage: delivered, and not sent again.
    down = false;
    const first = (await api.POST('/customers', { body: { name: 'Ada Early', email: 'ada@mail.example' } })).data!.data;
    await eventually(() => accepted.length === 1, 'the first delivery');
    down = true;

    // The outage: a customer created and updated twice over 24 hours; every attempt fails.
    const customer = (await api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy@mail.example' } })).data!.data;
    await advanceSandbox(api, 0.5);
    await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Ivy Chen-Park' } });
    await advanceSandbox(api, 0.5);
    await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Ivy Park' } });
    await eventually(async () => {
      const failed = await app.db('webhook_deliveries').where({ webhook_id: hook.id }).whereNotNull('failed_at').count<{ count: string }[]>({ count: '*' });
      return Number(failed[0]!.count) === 3;
    }, 'the outage\'s three deliveries to fail for good');
    const failedIds = (await app.db('webhook_deliveries').where({ webhook_id: hook.id }).whereNotNull('failed_at').pluck('id')).sort();

    // Disabled meanwhile: an event then gets no delivery, until the recovery.
    await api.PUT('/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url: hook.url, status: 'disabled' } });
    const late = (await api.POST('/customers', { body: { name: 'Zed Late', email: 'zed@mail.example' } })).data!.data;
    const refused = await api.POST('/webhooks/{id}/recover', { params: { path: { id: hook.id } }, body: { since: start.toISOString() } });
    expect(refused.response.status).toBe(409);
    const enabled = await api.PUT('/webhooks/{id}', { params: { path: { id: hook.id } }, body: { url: hook.url, status: 'enabled' } });
    expect(enabled.data!.data).toMatchObject({ status: 'enabled', disabled_reason: null });

    down = false;
    const recover = await api.POST('/webhooks/{id}/recover', { params: { path: { id: hook.id } }, body: { since: new Date(start.getTime() - HOUR).toISOString() } });
    expect(recover.response.status).toBe(202);
    const task = recover.data!.data;
    expect(task.status).toBe('pending');
    await app.startWorkers().then((workers) => after(() => workers.stop()));
    await eventually(async () => (await api.GET('/webhooks/{id}/recoveries/{task_id}', { params: { path: { id: hook.id, task_id: task.id } } })).data!.data.status === 'completed', 'the recovery');
    await eventually(() => accepted.length === 5, 'the recovered deliveries');
    await new Promise((done) => setTimeout(done, 500));

    const ids = accepted.map((request) => String(request.headers['webhook-id']));
    expect(new Set(ids).size).toBe(ids.length);
    expect(accepted).toHaveLength(5);
    // The failed deliveries went again under their own webhook-id; the late event got a new one.
    expect(ids.filter((id) => failedIds.includes(id)).sort()).toEqual(failedIds);
    const progress = await api.GET('/webhooks/{id}/recoveries/{task_id}', { params: { path: { id: hook.id, task_id: task.id } } });
    expect(progress.data!.data).toMatchObject({ status: 'completed', queued: 4, completed_at: expect.any(String) });

    // In order of occurrence for the customer: its create, then both updates, in turn.
    const ofCustomer = accepted.filter((request) => (request.body.data as { id: string }).id === customer.id);
    expect(ofCustomer.map((request) => [request.headers['x-service-event-name'], (request.body.data as { name: string }).name])).toEqual([
      ['customer.create', 'Ivy Chen'],
      ['customer.update', 'Ivy Chen-Park'],
      ['customer.update', 'Ivy Park'],
    ]);
    expect((accepted[0]!.body.data as { id: string }).id).toBe(first.id);
    expect(accepted.some((request) => (request.body.data as { id: string }).id === late.id)).toBe(true);
  });

  test.each([
    ['since older than retention', (now: Date) => ({ since: new Date(now.getTime() - 30 * 24 * HOUR - 60_000).toISOString() }), 'since'],
    ['since in the future', (now: Date) => ({ since: new Date(now.getTime() + 60_000).toISOString() }), 'since'],
    ['until before since', (now: Date) => ({ since: new Date(now.getTime() - HOUR).toISOString(), until: new Date(now.getTime() - 2 * HOUR).toISOString() }), 'until'],
  ])('%s is a 422 on that field, and no task is made', async (_label, body, field) => {
    const api = await freshSandbox();
    const hook = (await api.POST('/webhooks', { body: { url: 'http://127.0.0.1:9/r', events: ['customer.create'], secret: SECRET } })).data!.data;
    const now = await sandboxNow(api);
    const { response, error } = await api.POST('/webhooks/{id}/recover', { params: { path: { id: hook.id } }, body: body(now) });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toEqual([field]);
    expect(await app.db('webhook_recoveries').where({ webhook_id: hook.id }).first()).toBeUndefined();
  });

  test('since exactly 30 days ago is taken', async () => {
    const api = await freshSandbox();
    const hook = (await api.POST('/webhooks', { body: { url: 'http://127.0.0.1:9/r30', events: ['customer.create'], secret: SECRET } })).data!.data;
    const now = await sandboxNow(api);
    const { response } = await api.POST('/webhooks/{id}/recover', { params: { path: { id: hook.id } }, body: { since: new Date(now.getTime() - 30 * 24 * HOUR).toISOString() } });
    expect(response.status).toBe(202);
  });
});

describe('order', () => {
  test('an update waits for its object\'s create to be delivered, even when the create needs a retry', async () => {
    const api = await freshSandbox();
    let failOnce = true;
    const target = await receiver((request: Received, response: ServerResponse) => {
      if (failOnce && request.headers['x-service-event-name'] === 'customer.create') {
        failOnce = false;
        return response.writeHead(500).end();
      }
      response.writeHead(200).end();
    });
    await api.POST('/webhooks', { body: { url: target.url, events: ['customer.create', 'customer.update'], secret: SECRET } });
    const customer = (await api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy@mail.example' } })).data!.data;
    await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Ivy Chen-Park' } });
    await worker();
    await eventually(() => target.received.length === 3, 'the create twice and the update');
    expect(target.received.map((request) => request.headers['x-service-event-name'])).toEqual(['customer.create', 'customer.create', 'customer.update']);
  });
});
