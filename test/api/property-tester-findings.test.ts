/**
 * What a property-based tester run from the bundled documents found (107 operations, every
 * check on), each as a person sending the same request would see it: two 500s, and filter
 * values that any HTTP client sends refused as "must be url encoded".
 */
import type { ApiClient, Schemas } from '../../client';
import { accountWithCard, expectFieldError, newCustomer, newDebtAccount, unique, UNKNOWN_UUID } from '../support/fixtures';
import { rawRequest } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
});
afterAll(async () => app?.stop());

describe('PUT /debt-accounts/{id} moving an account that has a dispute', () => {
  test('moves it, its disputes follow it to the new customer, and the dispute still takes comments', async () => {
    const from = await newCustomer(api, { external_id: unique('FROM') });
    const to = await newCustomer(api, { external_id: unique('TO'), name: 'Ana Ruiz' });
    const account = await newDebtAccount(api, from.id, { external_id: unique('ACC'), balance: 50_000 });
    const filed = await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: account.id } }, body: { reason: 'wrong_amount', details: 'I paid part of this.' } });
    expect(filed.response.status).toBe(201);

    const moved = await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { customer_id: to.id, balance: 50_000 } as Schemas['DebtAccountUpdate'] });
    expect(moved.response.status).toBe(200);
    const read = await api.GET('/debt-accounts/{id}', { params: { path: { id: account.id }, query: { include: 'customer' } } });
    expect(read.data!.data.customer?.id).toBe(to.id);

    const dispute = (await api.GET('/disputes/{id}', { params: { path: { id: filed.data!.data.id } } })).data!.data;
    expect(dispute.customer_id).toBe(to.id);
    expect((await api.GET('/disputes', { params: { query: { customer_id: to.id } } })).data!.meta.total).toBe(1);
    expect((await api.GET('/disputes', { params: { query: { customer_id: from.id } } })).data!.meta.total).toBe(0);

    const comment = await api.POST('/disputes/{id}/comments', {
      params: { path: { id: dispute.id } },
      body: { comment: 'Statement received; checking.', author: { name: 'Dana Whitfield' } },
    });
    expect(comment.response.status).toBe(201);
  });
});

describe('POST /settlement-offers/{id}/accept with a payment method that does not exist', () => {
  test('is a 422 on payment_method_id, and the offer stays pending', async () => {
    const { account } = await accountWithCard(api, 100_000);
    const offer = (await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: account.id } }, body: { discount_percentage: 20, months_period: 6 } })).data!.data;
    for (const option of ['full_amount', 'payment_plan'] as const) {
      const body = { option, payment_method_id: UNKNOWN_UUID, ...(option === 'payment_plan' ? { frequency: 'monthly', start_date: new Date().toISOString().slice(0, 10) } : {}) };
      const { response, error } = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: offer.id } }, body: body as Schemas['SettlementOfferAccept'] });
      expect(response.status).toBe(422);
      expectFieldError(error, 'payment_method_id');
    }
    expect((await api.GET('/settlement-offers/{id}', { params: { path: { id: offer.id } } })).data!.data.status).toBe('pending');
  });

  test("another customer's payment method is refused the same way", async () => {
    const { account } = await accountWithCard(api, 100_000);
    const { methodId: theirs } = await accountWithCard(api, 100_000);
    const offer = (await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: account.id } }, body: { discount_percentage: 20, months_period: 6 } })).data!.data;
    const { response, error } = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: offer.id } }, body: { option: 'full_amount', payment_method_id: theirs } });
    expect(response.status).toBe(422);
    expectFieldError(error, 'payment_method_id');
  });
});

describe('filter values as HTTP clients send them', () => {
  test('`+` is a space and `:` `,` `\'` are data: debt_account_id=ACC+2026:17 finds the account "ACC 2026:17"', async () => {
    const external = `ACC ${unique('2026')}:17,o'neil`;
    const { account, methodId } = await accountWithCard(api, 20_000, { external_id: external });
    const paid = await api.POST('/charges', { body: { debt_account_id: account.id, amount: 5_000, payment_method_id: methodId } });
    expect(paid.response.status).toBe(201);
    // What Python's requests or a browser's form sends: spaces as `+`, the rest as typed.
    const query = external.replace(/ /g, '+');
    const token = app.organization.sandbox_token;
    for (const path of ['/transactions', '/charges', '/payment-plans', '/settlement-offers', '/documents', '/external-charges']) {
      const answer = await rawRequest(app.origin, { method: 'GET', path: `/api/v1${path}?debt_account_id=${query}`, headers: { authorization: `Bearer ${token}` } });
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    }
    const transactions = await rawRequest(app.origin, { method: 'GET', path: `/api/v1/transactions?debt_account_id=${query}`, headers: { authorization: `Bearer ${token}` } });
    const rows = (transactions.body as unknown as { data: { debt_account_id: string }[] }).data;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.debt_account_id === account.id)).toBe(true);
  });

  test('a time with its colons unencoded filters events', async () => {
    const token = app.organization.sandbox_token;
    const answer = await rawRequest(app.origin, { method: 'GET', path: '/api/v1/events?created_gte=2026-01-01T00:00:00Z', headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
  });
});
