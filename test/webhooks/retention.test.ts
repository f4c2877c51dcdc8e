/**
 * Outbox retention: events older than WEBHOOK_LOG_RETENTION_DAYS whose deliveries have all
 * finished go, with their deliveries; a recent event, or an old one still being retried, stays.
 * The job that runs it is on a pg-boss schedule every process registers.
 */
import { randomBytes } from 'node:crypto';
import { QUEUES } from '../../server/jobs/queue';
import { pruneOutbox, RETENTION_CRON } from '../../server/webhooks/retention';
import { startTestApp, type TestApp } from '../support/test-app';
import type { Workers } from '../../server/workers';
import { encodeEventBody } from '../../server/kernel/event-body';

let app: TestApp;
let workers: Workers;
beforeAll(async () => {
  app = await startTestApp({ webhookLogRetentionDays: 30 });
  workers = await app.startWorkers();
});
afterAll(async () => {
  await workers?.stop();
  await app?.stop();
});

async function eventWithDelivery(daysAgo: number, state: 'delivered' | 'failed' | 'retrying'): Promise<string> {
  const tenant = { organization_id: app.organization.organization_id, environment: 'production' };
  const [webhook] = await app.db('webhooks')
    .insert({ ...tenant, url: `https://hooks.example.com/${randomBytes(4).toString('hex')}`, events: ['customer.update'], secret_sealed: 'sealed' })
    .returning('id');
  const createdAt = app.db.raw(`now() - make_interval(days => ?)`, [daysAgo]);
  const [event] = await app.db('webhook_events').insert({ ...tenant, name: 'customer.update', body: encodeEventBody({}), created_at: createdAt }).returning('id');
  await app.db('webhook_deliveries').insert({
    webhook_id: webhook.id,
    event_id: event.id,
    attempts: state === 'retrying' ? 2 : 1,
    delivered_at: state === 'delivered' ? createdAt : null,
    failed_at: state === 'failed' ? createdAt : null,
    next_attempt_at: state === 'retrying' ? app.db.fn.now() : null,
    created_at: createdAt,
  });
  return event.id;
}

test('old finished events go with their deliveries; recent ones and those still being retried stay', async () => {
  const oldDelivered = await eventWithDelivery(31, 'delivered');
  const oldFailed = await eventWithDelivery(45, 'failed');
  const oldRetrying = await eventWithDelivery(31, 'retrying');
  const recent = await eventWithDelivery(29, 'delivered');

  expect(await pruneOutbox(app.db, 30)).toBe(2);

  const left = (await app.db('webhook_events').whereIn('id', [oldDelivered, oldFailed, oldRetrying, recent]).pluck('id')).sort();
  expect(left).toEqual([oldRetrying, recent].sort());
  const deliveries = await app.db('webhook_deliveries').whereIn('event_id', [oldDelivered, oldFailed]).count({ count: '*' });
  expect(Number(deliveries[0]!.count)).toBe(0);
  expect(await pruneOutbox(app.db, 30)).toBe(0);
});

test('the clean-up is a durable schedule in the database, not a timer of one process', async () => {
  const schedules = await app.boss.getSchedules();
  expect(schedules).toEqual(expect.arrayContaining([expect.objectContaining({ name: QUEUES.outboxRetention, cron: RETENTION_CRON })]));
});
