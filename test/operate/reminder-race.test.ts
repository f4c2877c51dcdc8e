/**
 * Two server processes and a sandbox clock's advance over the same due payment reminders: each
 * instalment is reminded exactly once. The log's row keyed by the instalment decides.
 */
import { randomBytes } from 'node:crypto';
import { createApiClient } from '../../client';
import { connect } from '../../server/db/database';
import { createLogger } from '../../server/kernel/logging';
import { startQueue, QUEUES } from '../../server/jobs/queue';
import { createOrganization } from '../../server/organizations/organization-repo';
import { wallTime } from '../../server/kernel/time-zones';
import { startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually } from '../support/webhooks';

const PLANS = 20;

/** A server process on the test's database, once it serves (its port chosen by the system and read from its log). */
const serve = (databaseUrl: string, key: string) =>
  startServerProcess(databaseUrl, { DATA_ENCRYPTION_KEY: key, RATE_LIMIT_PER_MINUTE: '100000' });

/** A zone where it is daytime now: a reminder held by quiet hours (at the advance's earlier time) is due again by now, so every one is sent. */
function daytimeZone(): string {
  const zones = ['America/New_York', 'America/Los_Angeles', 'Pacific/Honolulu', 'Europe/London', 'Asia/Kolkata', 'Asia/Tokyo', 'Pacific/Auckland'];
  return zones.find((zone) => {
    const hour = wallTime(new Date(), zone).hour;
    return hour >= 9 && hour < 19;
  })!;
}

test('two processes and a sandbox clock race over 20 due reminders: each instalment is reminded once, and sent', async () => {
  const database = await createTestDatabase();
  const db = connect(database.url, 2);
  const key = randomBytes(32).toString('base64');
  const children: Spawned[] = [];
  try {
    const organization = await createOrganization(db, 'Reminder Race Agency');
    const { server: first, port: firstPort } = await serve(database.url, key);
    children.push(first);
    const api = createApiClient({ baseUrl: `http://127.0.0.1:${firstPort}/api/v1`, token: organization.sandbox_token });
    // Off while the plans are made, so that nothing is reminded before the race.
    expect((await api.PUT('/settings', { body: { reminder_days_before: 0, time_zone: daytimeZone() } })).response.status).toBe(200);
    const inTwoDays = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const year = (new Date().getUTCFullYear() + 3) % 100;
    await Promise.all(
      Array.from({ length: PLANS }, async (_, i) => {
        const customer = (await api.POST('/customers', { body: { name: `Racer ${i}`, email: `racer${i}@mail.debt-collection.example` } })).data!.data;
        const account = (await api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: `LOC-REMIND-${i}`, location_name: 'Race Clinic', balance: 3000 } })).data!.data;
        const card = { card_holder: 'Racer', card_number: '4242424242424242', card_expiration_month: 8, card_expiration_year: year, card_security_code: '123' };
        const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } })).data!.data;
        const plan = await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: inTwoDays, amount: 1000 } });
        expect(plan.response.status).toBe(201);
      }),
    );
    const { server: secondServer, port: secondPort } = await serve(database.url, key);
    children.push(secondServer);
    const second = createApiClient({ baseUrl: `http://127.0.0.1:${secondPort}/api/v1`, token: organization.sandbox_token });

    // Three days before: every first instalment's reminder is due now (its day is in two days).
    expect((await api.PUT('/settings', { body: { reminder_days_before: 3 } })).response.status).toBe(200);
    const boss = await startQueue(database.url, createLogger('silent'));
    for (let i = 0; i < 4; i += 1) await boss.send(QUEUES.dueWork, {});
    await boss.stop({ graceful: false });
    const advance = await second.POST('/sandbox/clock', { body: { advance_to: new Date(Date.now() + 3_600_000).toISOString() } });
    expect(advance.response.status).toBe(200);

    const reminders = async () => (await api.GET('/communications', { params: { query: { kind: 'payment_reminder', limit: 100 } } })).data!;
    await eventually(async () => (await reminders()).data.filter((row) => row.status === 'logged').length === PLANS, 'every reminder logged (no SMTP_URL)', 60_000);
    const log = await reminders();
    expect(log.meta.total).toBe(PLANS);
    expect(new Set(log.data.map((row) => row.customer_id)).size).toBe(PLANS);
    expect(log.data.every((row) => row.sent_at !== null)).toBe(true);
  } finally {
    for (const { child } of children) child.kill('SIGKILL');
    await db.destroy();
    await database.drop();
  }
}, 240_000);
