/**
 * GET /metrics as Prometheus scrapes it: after a charge, a webhook delivery and a message held
 * for quiet hours, each is counted; while a gateway's answer is withheld the oldest processing
 * charge's age rises, and recovery brings it back to 0; labels carry route templates, never
 * ids; METRICS_TOKEN, when set, is asked for.
 */
import { sendToDebtor } from '../../server/communications/outgoing';
import { recoverCharges } from '../../server/payments/charge-recovery';
import { accountWithCard, newCustomer, unique } from '../support/fixtures';
import { sample, scrape } from '../support/metrics';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually, startReceiver, type Receiver } from '../support/webhooks';

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  receiver = await startReceiver();
  await app.startWorkers();
});
afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

test('a charge, its webhook delivery and a held message are each counted; the request by its route template', async () => {
  const before = await scrape(app.origin);
  const { response: subscribed } = await app.sandbox.POST('/webhooks', { body: { url: receiver.url, events: ['charge.succeeded'] } });
  expect(subscribed.status).toBe(201);

  const { account, methodId } = await accountWithCard(app.sandbox, 10_000);
  const { data, response } = await app.sandbox.POST('/charges', { body: { amount: 2500, debt_account_id: account.id, payment_method_id: methodId } });
  expect(response.status).toBe(201);
  expect(data!.data.status).toBe('succeeded');
  await eventually(() => receiver.received.find((got) => (got.body as { data?: { id?: string } }).data?.id === data!.data.id), 'the charge.succeeded delivery');

  // A payment reminder written at 03:00 in New York: held until 08:00 there (quiet hours).
  const customer = await newCustomer(app.sandbox, { email: `${unique('debtor')}@mail.debt-collection.example`, time_zone: 'America/New_York' });
  const tenant = { organizationId: app.organization.organization_id, environment: 'sandbox' as const, tokenHash: '' };
  const held = await app.db.transaction((trx) =>
    sendToDebtor(app.deps, trx, tenant, { customerId: customer.id, kind: 'payment_reminder', subject: 'Payment reminder', body: 'Your payment is due soon.', now: new Date('2026-12-04T08:00:00Z') }),
  );
  expect(held).toMatchObject({ status: 'held', reason: 'quiet_hours' });

  const after = await eventually(async () => {
    const text = await scrape(app.origin);
    return (sample(text, 'dcs_webhook_delivery_attempts_total', { outcome: 'delivered' }) ?? 0) > (sample(before, 'dcs_webhook_delivery_attempts_total', { outcome: 'delivered' }) ?? 0) ? text : undefined;
  }, 'the delivery counted');
  const grew = (name: string, labels: Record<string, string> = {}) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
  expect(grew('dcs_charges_answered_total', { status: 'succeeded', processor: 'sandbox', source: 'api' })).toBe(1);
  expect(grew('dcs_communications_total', { outcome: 'held', reason: 'quiet_hours' })).toBe(1);
  expect(sample(after, 'dcs_communications_held')).toBeGreaterThanOrEqual(1);
  expect(grew('http_server_request_duration_seconds_count', { method: 'POST', route: '/api/v1/charges', status_class: '2xx' })).toBe(1);
  expect(sample(after, 'dcs_webhook_endpoints', { status: 'enabled' })).toBe(1);
  expect(sample(after, 'dcs_webhook_undelivered', { lane: 'normal' })).toBe(0);
  expect(sample(after, 'dcs_metrics_database_up')).toBe(1);
  // The process's own: the pool, and Node's defaults.
  expect(sample(after, 'dcs_db_pool_max')).toBeGreaterThanOrEqual(10);
  expect(sample(after, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  expect(sample(after, 'nodejs_eventloop_lag_seconds')).toBeDefined();
  // Never an id in a label: neither the charge's, the account's nor the organization's.
  for (const id of [data!.data.id, account.id, app.organization.organization_id]) expect(after).not.toContain(id);
});

test('the oldest processing charge\'s age rises while its answer is withheld, and falls to 0 once recovery records it', async () => {
  app.config.testSandboxLoseAnswerCents = 1313;
  app.config.gatewayAnswerWaitMs = 100;
  const { account, methodId } = await accountWithCard(app.sandbox, 10_000);
  const { data, response } = await app.sandbox.POST('/charges', { body: { amount: 1313, debt_account_id: account.id, payment_method_id: methodId } });
  expect(response.status).toBe(202);
  expect(data!.data.status).toBe('processing');

  const first = await scrape(app.origin);
  expect(sample(first, 'dcs_charges', { status: 'processing', processor: 'sandbox' })).toBe(1);
  expect(sample(first, 'dcs_charge_reservations_held_cents', { processor: 'sandbox' })).toBe(1313);
  const age = sample(first, 'dcs_charge_oldest_processing_age_seconds')!;
  expect(age).toBeGreaterThanOrEqual(0);
  await eventually(async () => sample(await scrape(app.origin), 'dcs_charge_oldest_processing_age_seconds')! > age + 1 || undefined, 'the age rising');

  const recoveriesBefore = sample(first, 'dcs_charge_recoveries_total') ?? 0;
  expect(await recoverCharges(app.deps, 0)).toBe(1);
  const after = await scrape(app.origin);
  expect(sample(after, 'dcs_charge_oldest_processing_age_seconds')).toBe(0);
  expect(sample(after, 'dcs_charges', { status: 'processing', processor: 'sandbox' })).toBe(0);
  expect(sample(after, 'dcs_charge_recoveries_total')).toBe(recoveriesBefore + 1);
});

test('a failed statement is counted by its SQLSTATE class; a job deferred to later is in its queue but not waiting', async () => {
  const before = await scrape(app.origin);
  await expect(app.db.raw('SELECT 1 / 0')).rejects.toThrow(/division by zero/);
  await app.boss.send('email', { to: 'ops@acme-recovery.example', subject: 'Later', text: 'Later.' }, { startAfter: 3600 });
  const after = await scrape(app.origin);
  expect((sample(after, 'dcs_db_statement_errors_total', { sqlstate_class: '22' }) ?? 0) - (sample(before, 'dcs_db_statement_errors_total', { sqlstate_class: '22' }) ?? 0)).toBe(1);
  expect(sample(after, 'dcs_job_queue_jobs', { queue: 'email', state: 'created' })).toBeGreaterThanOrEqual(1);
  // Not waiting: the count of waiting e-mail jobs (earlier tests' may wait, no worker runs here) does not move.
  expect(sample(after, 'dcs_job_queue_waiting', { queue: 'email' })).toBe(sample(before, 'dcs_job_queue_waiting', { queue: 'email' }));
});

test('with METRICS_TOKEN set, a scrape without it (or with another) is 401 and with it 200', async () => {
  app.config.metricsToken = 'prometheus-scrape-token-1234';
  try {
    expect((await fetch(`${app.origin}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${app.origin}/metrics`, { headers: { authorization: 'Bearer prometheus-scrape-token-9999' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: 'No valid metrics token was given.', errorCode: 'unauthenticated' });
    expect(sample(await scrape(app.origin, 'prometheus-scrape-token-1234'), 'dcs_metrics_database_up')).toBe(1);
    // The probes ask for no token.
    expect((await fetch(`${app.origin}/livez`)).status).toBe(200);
  } finally {
    app.config.metricsToken = undefined;
  }
});

test('POST /metrics is 405; the probes answer JSON', async () => {
  expect((await fetch(`${app.origin}/metrics`, { method: 'POST' })).status).toBe(405);
  const ready = await fetch(`${app.origin}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ status: 'ready', database: 'ok', migrations: 'current', workers: 'started', draining: false });
  expect(await (await fetch(`${app.origin}/livez`)).json()).toEqual({ status: 'ok' });
});
