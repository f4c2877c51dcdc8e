/**
 * Payment methods beyond create: list, get, make primary, delete; tenancy; and the
 * customer.update each change emits, in the document's shape.
 */
import type { ApiClient } from '../../client';
import { CARD_YEAR, expectFieldError, newCustomer, UNKNOWN_UUID, type ErrorBody } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { payloadErrors, subscribeToEverything } from '../support/webhooks';
import { decodeEventBody } from '../../server/kernel/event-body';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.api);
});
afterAll(async () => app?.stop());

const card = (number = '4242424242424242') => ({ card_holder: 'Maria Gonzalez', card_number: number, card_expiration_month: 8, card_expiration_year: CARD_YEAR });
const ach = { account_holder: 'Maria Gonzalez', account_type: 'checking' as const, routing_number: '011000015', account_number: '000123456789', account_zip: '78704', account_state: 'TX' };

async function withMethods(client: ApiClient = app.api) {
  const customer = await newCustomer(client);
  const ids: string[] = [];
  for (const body of [{ card: card() }, { ach }, { card: card('5555555555554444') }]) {
    const { data, response } = await client.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body });
    expect(response.status).toBe(201);
    ids.push(data!.data.id);
  }
  return { customer, ids };
}

const list = (id: string, query: { page?: number; limit?: number } = {}, client: ApiClient = app.api) =>
  client.GET('/customers/{id}/payment-methods', { params: { path: { id }, query } });

async function customerUpdates(customerId: string) {
  const rows = await app.db('webhook_events').where({ name: 'customer.update', object_id: customerId }).orderBy('created_at');
  const payloads = rows.map((row) => decodeEventBody(row.body) as { payment_methods: { id: string; is_primary?: boolean }[] });
  for (const data of payloads) expect(payloadErrors('customer.update', { data })).toEqual([]);
  return payloads;
}

describe('GET /customers/{id}/payment-methods', () => {
  test('pages the methods oldest first, numbers masked', async () => {
    const { customer, ids } = await withMethods();
    const first = await list(customer.id, { limit: 2 });
    expect(first.response.status).toBe(200);
    expect(first.data!.data.map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect(first.data!.meta).toMatchObject({ total: 3, last_page: 2, per_page: 2 });
    expect(first.data!.data[0]!.card_token!.card_number).toBe('4242');
    expect(first.data!.data[1]!.bank_account!.account_number).toBe('********6789');
    const second = await app.api.GET('/customers/{id}/payment-methods', { params: { path: { id: customer.id }, query: { limit: 2, page: 2 } } });
    expect(second.data!.data.map((m) => m.id)).toEqual([ids[2]]);
  });

  test('a customer without methods has an empty list; an unknown or foreign customer is a 404', async () => {
    const customer = await newCustomer(app.api);
    expect((await list(customer.id)).data!.data).toEqual([]);
    expect((await list(UNKNOWN_UUID)).response.status).toBe(404);
    expect((await list(customer.id, {}, app.other)).response.status).toBe(404);
    expect((await list(customer.id, {}, app.sandbox)).response.status).toBe(404);
  });
});

describe('GET /payment-methods/{id}', () => {
  test('answers the method; another tenant gets a 404, a malformed id a 422', async () => {
    const { ids } = await withMethods();
    const { data, response } = await app.api.GET('/payment-methods/{id}', { params: { path: { id: ids[1]! } } });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ id: ids[1], type: 'ach', is_primary: false });
    expect((await app.other.GET('/payment-methods/{id}', { params: { path: { id: ids[1]! } } })).response.status).toBe(404);
    expect((await app.api.GET('/payment-methods/{id}', { params: { path: { id: UNKNOWN_UUID } } })).response.status).toBe(404);
    const malformed = await app.api.GET('/payment-methods/{id}', { params: { path: { id: 'nope' } } });
    expect(malformed.response.status).toBe(422);
  });
});

describe('PUT /payment-methods/{id}', () => {
  test('is_primary: true moves the primary; exactly one primary remains; customer.update shows it', async () => {
    const { customer, ids } = await withMethods();
    const before = (await customerUpdates(customer.id)).length;
    const { data, response } = await app.api.PUT('/payment-methods/{id}', { params: { path: { id: ids[2]! } }, body: { is_primary: true } });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ id: ids[2], is_primary: true });
    const primaries = (await list(customer.id)).data!.data.filter((m) => m.is_primary).map((m) => m.id);
    expect(primaries).toEqual([ids[2]]);
    const updates = await customerUpdates(customer.id);
    expect(updates.length).toBe(before + 1);
  });

  test('two methods made primary at once still leave exactly one primary', async () => {
    const { customer, ids } = await withMethods();
    const answers = await Promise.all(ids.slice(1).map((id) => app.api.PUT('/payment-methods/{id}', { params: { path: { id } }, body: { is_primary: true } })));
    expect(answers.map((a) => a.response.status)).toEqual([200, 200]);
    expect((await list(customer.id)).data!.data.filter((m) => m.is_primary)).toHaveLength(1);
  });

  test('is_primary: false on the primary is a 422; on another method it changes nothing', async () => {
    const { ids } = await withMethods();
    const refused = await app.api.PUT('/payment-methods/{id}', { params: { path: { id: ids[0]! } }, body: { is_primary: false } });
    expect(refused.response.status).toBe(422);
    expectFieldError(refused.error, 'is_primary');
    const noop = await app.api.PUT('/payment-methods/{id}', { params: { path: { id: ids[1]! } }, body: { is_primary: false } });
    expect(noop.data!.data.is_primary).toBe(false);
  });

  test('unknown fields and a string "true" are 422s; another tenant gets a 404', async () => {
    const { ids } = await withMethods();
    const extra = await app.api.PUT('/payment-methods/{id}', { params: { path: { id: ids[1]! } }, body: { is_primary: true, card_holder: 'X' } as never });
    expect(extra.response.status).toBe(422);
    const text = await app.api.PUT('/payment-methods/{id}', { params: { path: { id: ids[1]! } }, body: { is_primary: 'true' } as never });
    expectFieldError(text.error, 'is_primary');
    const foreign = await app.other.PUT('/payment-methods/{id}', { params: { path: { id: ids[1]! } }, body: { is_primary: true } });
    expect(foreign.response.status).toBe(404);
    expect((foreign.error as ErrorBody).errorCode).toBe('not_found');
  });
});

describe('DELETE /payment-methods/{id}', () => {
  test('deleting the primary promotes the oldest remaining method and emits customer.update without it', async () => {
    const { customer, ids } = await withMethods();
    const { data, response } = await app.api.DELETE('/payment-methods/{id}', { params: { path: { id: ids[0]! } } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ success: true });
    const left = (await list(customer.id)).data!.data;
    expect(left.map((m) => [m.id, m.is_primary])).toEqual([
      [ids[1], true],
      [ids[2], false],
    ]);
    expect((await app.api.GET('/payment-methods/{id}', { params: { path: { id: ids[0]! } } })).response.status).toBe(404);
    const last = (await customerUpdates(customer.id)).at(-1)!;
    expect(last.payment_methods.map((m) => m.id)).toEqual([ids[1], ids[2]]);
  });

  test("another tenant's method is a 404 and stays", async () => {
    const { customer, ids } = await withMethods();
    expect((await app.other.DELETE('/payment-methods/{id}', { params: { path: { id: ids[1]! } } })).response.status).toBe(404);
    expect((await list(customer.id)).data!.data).toHaveLength(3);
  });
});
