/**
 * What a bulk action tells subscribed webhooks: location.create, customer.create and
 * debt-account.create for what it created, then import.complete, each in the document's shape.
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually, payloadErrors, startReceiver, type Receiver } from '../support/webhooks';

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await app.startWorkers();
  receiver = await startReceiver();
});
afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

const names = () => receiver.received.map((r) => String(r.headers['x-service-event-name']));

test('a bulk action delivers the events of what it created, then import.complete, all valid against the document', async () => {
  const events = ['location.create', 'customer.create', 'debt-account.create', 'import.complete'] as const;
  const hook = await app.api.POST('/webhooks', { body: { url: receiver.url, events: [...events], secret: 'bulk_events_secret_123' } });
  expect(hook.response.status).toBe(201);
  const rows = [0, 1].map((i) => ({
    customer: { name: `Maria Gonzalez ${i}`, email: `maria${i}@mail.debt-collection.example`, external_id: `BE-CUST-${i}`, address: { postal_code: '78704' } },
    location: { name: 'Lakeside Medical Center', external_id: 'BE-LOC' },
    parent_debt_accounts: [{ external_id: `BE-P-${i}`, balance: 0 }],
    debt_accounts: [{ external_id: `BE-A-${i}`, parent_external_id: `BE-P-${i}`, balance: 300 }],
  }));
  // A third row fails: its customer repeats the first one's external_id; it creates nothing.
  rows.push({ ...rows[0]!, customer: { ...rows[0]!.customer, name: 'Duplicate' }, parent_debt_accounts: [{ external_id: 'BE-P-X', balance: 0 }], debt_accounts: [] });
  const { data } = await app.api.POST('/bulk', { body: rows });
  const bulkId = data!.data.bulk_id;

  await eventually(() => names().includes('import.complete'), 'import.complete');
  await eventually(() => names().filter((name) => name === 'debt-account.create').length >= 4, 'four debt-account.create');
  // Deliveries arrive in no guaranteed order: wait for both customers too, then count exactly.
  await eventually(() => names().filter((name) => name === 'customer.create').length >= 2, 'two customer.create');
  expect(names().filter((name) => name === 'location.create')).toHaveLength(1);
  expect(names().filter((name) => name === 'customer.create')).toHaveLength(2);
  for (const received of receiver.received) {
    expect(payloadErrors(String(received.headers['x-service-event-name']), received.body)).toEqual([]);
  }
  const complete = receiver.received.find((r) => r.headers['x-service-event-name'] === 'import.complete')!.body as { data: Record<string, unknown> };
  expect(complete.data).toMatchObject({ bulk_id: bulkId, count: 3, processed: 3, failed: 1, status: 'completed' });
  const parent = receiver.received
    .map((r) => r.body as { data: Record<string, unknown> })
    .find((body) => body.data.external_id === 'BE-P-1')!;
  expect(parent.data).toMatchObject({ balance: 300, has_children: true });
});
