/**
 * Real payloads, delivered by a real worker to a receiver, checked against the document's
 * webhook schemas: a payload that breaks the document fails here.
 */
import { decryptWebhookData, verifyWebhookSignature, type Schemas } from '../../client';
import { CARD_YEAR, newCustomer, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually, payloadErrors, startReceiver, startTestWorker, type Receiver } from '../support/webhooks';
import { decodeEventBody } from '../../server/kernel/event-body';
import type { WebhookWorker } from '../../server/webhooks/delivery-worker';
import { loadDocument } from '../../server/http/validator';

const SECRET = 'payload_tests_secret_1234';
const ALL_EVENTS = Object.keys((loadDocument() as unknown as { webhooks: object }).webhooks) as Schemas['EventName'][];
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

let app: TestApp;
let worker: WebhookWorker;
let receiver: Receiver;
let webhookId: string;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, paymentGateway: 'sandbox' });
  worker = await startTestWorker(app);
  receiver = await startReceiver();
  const { data } = await app.api.POST('/webhooks', { body: { url: receiver.url, events: ALL_EVENTS, secret: SECRET } });
  webhookId = data!.data.id;
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await app?.stop();
});

type Data = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The deliveries received for `event` whose data passes `match`, each checked against the document. */
async function delivered(event: string, match: (data: Data) => boolean, count = 1): Promise<Data[]> {
  const found = await eventually(() => {
    const hits = receiver.received.filter((r) => r.headers['x-service-event-name'] === event && match(r.body.data as Data));
    return hits.length >= count ? hits : undefined;
  }, `${count} × ${event}`);
  for (const hit of found) {
    expect(payloadErrors(event, hit.body)).toEqual([]);
    expect(verifyWebhookSignature(hit.raw, hit.headers['x-service-signature-256'] as string, SECRET)).toBe(true);
    expect(hit.headers['x-service-webhook-id']).toBe(webhookId);
  }
  return found.map((hit) => hit.body.data as Data);
}

describe('customer events', () => {
  test('create, update and delete carry the customer in the document shape, card last four and ACH masked', async () => {
    const customer = await newCustomer(app.api, {
      name: 'Maria del Carmen Gonzalez',
      external_id: unique('CUST'),
      address: { postal_code: '78704', line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX' },
      metadata: { branch: 'north' },
      ssn_last4: 427,
    });
    const [created] = await delivered('customer.create', (d) => d.id === customer.id);
    expect(created).toMatchObject({ first_name: 'Maria', last_name: 'del Carmen Gonzalez', ssn_last4: '0427', has_debt_accounts: false });
    expect(created!.created_at).toMatch(TIMESTAMP);
    expect(created!.metadata[0]).toMatchObject({ attribute: 'branch', value: 'north' });

    const id = customer.id;
    await app.api.POST('/customers/{id}/payment-methods', {
      params: { path: { id } },
      body: { card: { card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_expiration_month: 12, card_expiration_year: 40 } },
    });
    await app.api.POST('/customers/{id}/payment-methods', {
      params: { path: { id } },
      body: { ach: { account_holder: 'Maria Gonzalez', account_type: 'checking', routing_number: '011000015', account_number: '000123456789', account_zip: '78704', account_state: 'TX' } },
    });
    const [withBoth] = await delivered('customer.update', (d) => d.id === id && d.payment_methods.length === 2);
    const [card, ach] = withBoth!.payment_methods;
    expect(card.card_token.card_number).toBe('4242');
    expect(card.billing_address).toMatchObject({ line1: '1208 Oak Hollow Dr', state: 'TX' });
    expect(ach.bank_account).toMatchObject({ routing_number: '*****0015', account_number: '********6789' });
    const everything = receiver.received.map((r) => r.raw.toString()).join('');
    expect(everything).not.toContain('4242424242424242');
    expect(everything).not.toContain('000123456789');

    await app.api.DELETE('/customers/{id}', { params: { path: { id } } });
    const [deleted] = await delivered('customer.delete', (d) => d.id === id);
    expect(deleted!.name).toBe('Maria del Carmen Gonzalez');
  });

  test('a single-word name has no first or last name', async () => {
    const customer = await newCustomer(app.api, { name: 'Acme' });
    const [created] = await delivered('customer.create', (d) => d.id === customer.id);
    expect(created).toMatchObject({ first_name: null, last_name: null });
  });

  test('a request that fails emits nothing', async () => {
    const externalId = unique('CUST');
    await newCustomer(app.api, { external_id: externalId });
    const { response } = await app.api.POST('/customers', { body: { name: 'Second Try', email: 'second@mail.debt-collection.example', external_id: externalId } });
    expect(response.status).toBe(422);
    const bodies: { body: Buffer }[] = await app.db('webhook_events').select('body');
    expect(bodies.map((row) => decodeEventBody(row.body)).filter((data) => (data as { name?: string }).name === 'Second Try')).toEqual([]);
  });
});

describe('debt account, payment plan and location events', () => {
  test('an account with a plan under a parent: location.create, debt-account.create, payment-plan.create, and the parent updated', async () => {
    const customer = await newCustomer(app.api);
    const locationKey = unique('LOC');
    const parentKey = unique('ACC');
    const parent = (
      await app.api.POST('/debt-accounts', {
        body: { customer_id: customer.id, location_id: locationKey, location_name: 'Lakeside Medical Center', balance: 0, external_id: parentKey },
      })
    ).data!.data;
    const [location] = await delivered('location.create', (d) => d.external_id === locationKey);
    expect(location!.rules).toEqual([]);

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const child = await app.api.POST('/debt-accounts', {
      body: {
        customer_id: customer.id,
        location_id: locationKey,
        balance: 184250,
        parent_external_id: parentKey,
        rules: { min_payment_amount: 2500 },
        metadata: { portfolio: 'spring-2026' },
      },
    });
    expect(child.response.status).toBe(201);
    const childId = child.data!.data.id;
    const [created] = await delivered('debt-account.create', (d) => d.id === childId);
    expect(created).toMatchObject({ is_parent: false, parent_external_id: parentKey, rules: { minimum_payment_amount: 2500 }, customer: { id: customer.id } });
    expect(created!.parent.id).toBe(parent.id);
    const [updatedParent] = await delivered('debt-account.update', (d) => d.id === parent.id && d.balance === 184250);
    expect(updatedParent).toMatchObject({ has_children: true, current_balance: 184250 });
    expect(updatedParent!.children[0].id).toBe(childId);
    expect(updatedParent!.first_child.id).toBe(childId);

    const planned = await app.api.POST('/debt-accounts', {
      body: { customer_id: customer.id, location_id: locationKey, balance: 5000, payment_plan: { frequency: 'monthly', start_date: tomorrow, amount: 2500 } },
    });
    const plannedId = planned.data!.data.id;
    const [plan] = await delivered('payment-plan.create', (d) => d.debt_account.id === plannedId);
    expect(plan).toMatchObject({ frequency: 'monthly', start_date: tomorrow, amount: 2500, status: 'pending_enrollment' });
    expect(plan!.debt_account.customer.id).toBe(customer.id);
    const [withPlan] = await delivered('debt-account.create', (d) => d.id === plannedId);
    expect(withPlan!.payment_plan.id).toBe(plan!.id);

    await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: plannedId } } });
    await delivered('debt-account.delete', (d) => d.id === plannedId);
    await delivered('payment-plan.delete', (d) => d.id === plan!.id);

    await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: childId } } });
    await delivered('debt-account.delete', (d) => d.id === childId);
    await delivered('debt-account.update', (d) => d.id === parent.id && d.balance === 0 && d.children.length === 0);
  });

  test('location create, update and delete', async () => {
    const { data } = await app.api.POST('/locations', { body: { name: 'Summit Recovery Partners', metadata: { region: 'midwest' } } });
    const id = data!.data.id;
    await delivered('location.create', (d) => d.id === id);
    await app.api.PUT('/locations/{id}', { params: { path: { id } }, body: { name: 'Summit Recovery' } });
    const [updated] = await delivered('location.update', (d) => d.id === id);
    expect(updated).toMatchObject({ name: 'Summit Recovery', debt_accounts_count: 0 });
    await app.api.DELETE('/locations/{id}', { params: { path: { id } } });
    await delivered('location.delete', (d) => d.id === id);
  });
});

describe('payment events', () => {
  const card = (number: string) => ({ card_holder: 'Maria Gonzalez', card_number: number, card_expiration_month: 8, card_expiration_year: CARD_YEAR });

  test('a charge on a parent: charge.succeeded, debt-account.update of child and parent listing the charge and its transactions, then refund.succeeded and void.succeeded', async () => {
    const customer = await newCustomer(app.api);
    const parentKey = unique('ACC');
    const base = { customer_id: customer.id, location_id: unique('LOC'), location_name: 'Lakeside Medical Center' };
    const parent = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 0, external_id: parentKey } })).data!.data;
    const older = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 3000, parent_external_id: parentKey } })).data!.data;
    const younger = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 5000, parent_external_id: parentKey } })).data!.data;
    const method = (await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: card('4242424242424242') } })).data!.data;

    const made = await app.api.POST('/charges', { body: { amount: 4000, debt_account_id: parent.id, payment_method_id: method.id } });
    expect(made.response.status).toBe(201);
    const chargeId = made.data!.data.id;
    const [succeeded] = await delivered('charge.succeeded', (d) => d.id === chargeId);
    expect(succeeded).toMatchObject({ amount: 4000, success: true, payment_method: { id: method.id }, debt_account: { id: parent.id } });
    expect(succeeded!.transaction).toMatchObject({ type_id: 1, amount_cents: 3000, customer_uuid: customer.id, debt_account: { id: older.id } });

    // The older child paid 3000 and the younger 1000; each update lists its own transaction, the parent the charge.
    const [olderUpdate] = await delivered('debt-account.update', (d) => d.id === older.id && d.current_balance === 0);
    expect(olderUpdate!.transactions.map((t: Data) => [t.amount_cents, t.status])).toEqual([[3000, 'succeeded']]);
    expect(olderUpdate!.charges).toEqual([]);
    const [parentUpdate] = await delivered('debt-account.update', (d) => d.id === parent.id && d.current_balance === 4000);
    expect(parentUpdate!.charges.map((c: Data) => c.id)).toEqual([chargeId]);
    await delivered('debt-account.update', (d) => d.id === younger.id && d.current_balance === 4000);

    // A partial refund gives back to the last-paid child first.
    await app.api.POST('/charges/{id}/refund', { params: { path: { id: chargeId } }, body: { amount: 1500 } });
    const [refunded] = await delivered('refund.succeeded', (d) => d.id === chargeId);
    expect(refunded).toMatchObject({ status: 'partially_refunded', amount_cents: -1500, refunded_amount: 1500 });
    expect(refunded!.transactions.map((t: Data) => [t.debt_account.id, t.amount_cents, t.type_id])).toEqual([
      [younger.id, -1000, 3],
      [older.id, -500, 3],
    ]);
    const [parentAfter] = await delivered('debt-account.update', (d) => d.id === parent.id && d.current_balance === 5500);
    expect(parentAfter!.charges[0]).toMatchObject({ id: chargeId });

    const second = (await app.api.POST('/charges', { body: { amount: 500, debt_account_id: younger.id, card: card('5555555555554444') } })).data!.data;
    await app.api.POST('/charges/{id}/void', { params: { path: { id: second.id } } });
    const [voided] = await delivered('void.succeeded', (d) => d.id === second.id);
    expect(voided).toMatchObject({ status: 'voided', amount_cents: -500 });
    expect(voided!.transactions.map((t: Data) => [t.amount_cents, t.type_id])).toEqual([[-500, 2]]);
    // Newest first, as the API embeds them: the void, the charge, then the refund and charge of the first.
    const [youngerLast] = await delivered('debt-account.update', (d) => d.id === younger.id && d.transactions.length === 4);
    expect(youngerLast!.transactions.map((t: Data) => t.type_id)).toEqual([2, 1, 3, 1]);
    expect(youngerLast!.charges.map((c: Data) => c.id)).toEqual([second.id]);
  });

  test('a declined card: charge.failed with the decline code', async () => {
    const customer = await newCustomer(app.api);
    const account = (await app.api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: unique('LOC'), location_name: 'Lakeside', balance: 5000 } })).data!.data;
    const { error, response } = await app.api.POST('/charges', { body: { amount: 1000, debt_account_id: account.id, card: card('4000000000000002') } });
    expect(response.status).toBe(400);
    const chargeId = (error as { charge_id: string }).charge_id;
    const [failed] = await delivered('charge.failed', (d) => d.id === chargeId);
    expect(failed).toMatchObject({ success: false, error_code: 'card_declined', amount: 1000, payment_method: null, debt_account: { id: account.id } });
  });

  test('a scheduled charge: scheduled-charge.create, then scheduled-charge.delete when it is canceled', async () => {
    const customer = await newCustomer(app.api);
    const account = (await app.api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: unique('LOC'), location_name: 'Lakeside', balance: 5000 } })).data!.data;
    const method = (await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: card('4242424242424242') } })).data!.data;
    const day = new Date(app.clock.now().getTime() + 3 * 86_400_000).toISOString().slice(0, 10);
    const made = await app.api.POST('/charges', { body: { amount: 1000, debt_account_id: account.id, payment_method_id: method.id, scheduled_at: day } });
    expect(made.data!.data.status).toBe('scheduled');
    const id = made.data!.data.id;
    const [created] = await delivered('scheduled-charge.create', (d) => d.id === id);
    expect(created).toMatchObject({ scheduled_at: `${day} 14:00:00`, amount: 1000, charge: null, successfully_charged_at: null, payment_method: { id: method.id, has_active_scheduled_charge: true } });
    expect(created!.created_at).toMatch(TIMESTAMP);
    await app.api.POST('/charges/{id}/cancel', { params: { path: { id } } });
    const [deleted] = await delivered('scheduled-charge.delete', (d) => d.id === id);
    expect(deleted).toMatchObject({ charge: null, debt_account: { id: account.id, current_balance: 5000 } });
  });

  test("while a charge is scheduled, its account's payload lists it and its method tells it, in the customer's payload too; not once it is canceled", async () => {
    const customer = await newCustomer(app.api);
    const account = (await app.api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: unique('LOC'), location_name: 'Lakeside', balance: 5000 } })).data!.data;
    const method = (await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: card('4242424242424242') } })).data!.data;
    const day = new Date(app.clock.now().getTime() + 4 * 86_400_000).toISOString().slice(0, 10);
    const id = (await app.api.POST('/charges', { body: { amount: 1200, debt_account_id: account.id, payment_method_id: method.id, scheduled_at: day } })).data!.data.id;

    await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 5000, external_status: 'scheduled' } });
    const [listed] = await delivered('debt-account.update', (d) => d.id === account.id && d.external_status === 'scheduled');
    expect(listed!.scheduled_charges).toMatchObject([{ id, amount: 1200, scheduled_at: `${day} 14:00:00`, charge: null, payment_method: { id: method.id, has_active_scheduled_charge: true } }]);
    await app.api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Rosa Scheduled' } });
    const [told] = await delivered('customer.update', (d) => d.id === customer.id && d.name === 'Rosa Scheduled');
    expect(told!.payment_methods).toMatchObject([{ id: method.id, has_active_scheduled_charge: true, has_active_payment_plan: false, has_active_settlement_offer: false }]);

    await app.api.POST('/charges/{id}/cancel', { params: { path: { id } } });
    await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 5000, external_status: 'canceled' } });
    const [after] = await delivered('debt-account.update', (d) => d.id === account.id && d.external_status === 'canceled');
    expect(after!.scheduled_charges).toEqual([]);
    await app.api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Rosa Unscheduled' } });
    const [untold] = await delivered('customer.update', (d) => d.id === customer.id && d.name === 'Rosa Unscheduled');
    expect(untold!.payment_methods).toMatchObject([{ id: method.id, has_active_scheduled_charge: false }]);
  });
});

describe('the schema check', () => {
  test('catches a payload that breaks the document', () => {
    const body = { data: { id: null, name: 'Acme' } };
    expect(payloadErrors('customer.create', body).length).toBeGreaterThan(0);
    expect(payloadErrors('location.create', { data: { ...locationExample(), debt_accounts_count: -1 } }).length).toBeGreaterThan(0);
    expect(payloadErrors('location.create', { data: locationExample() })).toEqual([]);
  });
});

function locationExample(): Data {
  return {
    id: null, name: 'Lakeside', type: 'original_creditor', external_id: null, rules: [], card: true, ach: true,
    metadata: [], debt_accounts_count: 0, created_at: '2026-03-01 10:00:00', updated_at: '2026-03-01 10:00:00',
  };
}

describe('test deliveries', () => {
  test('every event of the document: generated data that fits its schema, every id null, signed; external-charge.create opens with the secret', async () => {
    const start = receiver.received.length;
    const { data } = await app.api.POST('/webhooks/trigger/{webhook_uuid}', { params: { path: { webhook_uuid: webhookId } }, body: { events: ALL_EVENTS } });
    expect(data!.not_dispatched).toEqual([]);
    const hits = await eventually(() => {
      const got = receiver.received.slice(start).filter((r) => r.body && (r.headers['x-service-event-name'] as string));
      return got.length >= ALL_EVENTS.length ? got : undefined;
    }, 'a test delivery of every event');
    const ids: unknown[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) {
          if (key === 'id' || key === 'uuid' || key.endsWith('_uuid')) ids.push(inner);
          else collect(inner);
        }
      }
    };
    for (const hit of hits) {
      const event = hit.headers['x-service-event-name'] as string;
      expect({ event, errors: payloadErrors(event, hit.body) }).toEqual({ event, errors: [] });
      expect(verifyWebhookSignature(hit.raw, hit.headers['x-service-signature-256'] as string, SECRET)).toBe(true);
      collect(event === 'external-charge.create' ? decryptWebhookData(hit.body.data as string, SECRET) : hit.body.data);
    }
    expect(new Set(hits.map((hit) => hit.headers['x-service-event-name']))).toEqual(new Set(ALL_EVENTS));
    expect(ids.length).toBeGreaterThan(ALL_EVENTS.length);
    expect(ids.every((id) => id === null)).toBe(true);
  });
});
