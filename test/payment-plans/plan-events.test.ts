/**
 * The payment plan events as a receiver gets them, checked against the document's webhook
 * schemas: the schedule, the method charged and the plan's state in every payload.
 */
import type { Schemas } from '../../client';
import { newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { startReceiver, startTestWorker, type Receiver, deliveredData, type DeliveredData } from '../support/webhooks';
import type { WebhookWorker } from '../../server/webhooks/delivery-worker';

const EVENTS: Schemas['EventName'][] = ['payment-plan.create', 'payment-plan.update', 'payment-plan.delete'];
const DAY = 86_400_000;

let app: TestApp;
let worker: WebhookWorker;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  worker = await startTestWorker(app);
  receiver = await startReceiver();
  await app.api.POST('/webhooks', { body: { url: receiver.url, events: EVENTS, secret: 'plan_events_secret_1234' } });
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await app?.stop();
});

type Data = DeliveredData;

const delivered = (event: string, match: (data: Data) => boolean): Promise<Data> => deliveredData(receiver, event, match);

test('create, update and cancel of an enrolled plan tell its schedule, its card and its state', async () => {
  const customer = await newCustomer(app.api);
  const { data: method } = await app.api.POST('/customers/{id}/payment-methods', {
    params: { path: { id: customer.id } },
    body: { card: { card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_expiration_month: 12, card_expiration_year: 40 } },
  });
  const account = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), balance: 25_050 });
  const start = new Date(app.clock.now().getTime() + DAY).toISOString().slice(0, 10);
  const { data } = await app.api.POST('/payment-plans', {
    body: { debt_account_id: account.id, payment_method_id: method!.data.id, frequency: 'weekly', start_date: start, amount: 10_000 },
  });
  const plan = data!.data;

  const created = await delivered('payment-plan.create', (d) => d.id === plan.id);
  expect(created).toMatchObject({ status: 'active', amount: 10_000, charges_total_amount: 0, latest_charge: null, debt_account: { id: account.id } });
  expect(created.charges.map((c: Data) => [c.charge_date, c.amount, c.status, c.attempts])).toEqual(plan.charges.map((c) => [c.charge_date, c.amount, 'pending', 0]));
  expect(created.next_charge).toMatchObject({ id: plan.charges[0]!.id, charge_date: start });
  expect(created.payment_method).toMatchObject({ id: method!.data.id, has_active_payment_plan: true, card_token: { card_number: '4242' } });
  expect(created.end_date).toBe(plan.end_date);

  await app.api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { amount: 25_050 } });
  const updated = await delivered('payment-plan.update', (d) => d.id === plan.id);
  expect(updated.charges.filter((c: Data) => c.status === 'pending').map((c: Data) => c.amount)).toEqual([25_050]);

  await app.api.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } });
  const canceled = await delivered('payment-plan.delete', (d) => d.id === plan.id);
  expect(canceled).toMatchObject({ status: 'canceled', next_charge: null, payment_method: { has_active_payment_plan: false } });
  expect(canceled.canceled_at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
});
