/**
 * Settlement offers through the API (tag Settlement offers): making one and every rule of it
 * at its edge, reading, listing and revoking, and each status move that is not money's:
 * expiry on the sandbox clock, supersession by a payment, refusals of what cannot move.
 */
import type { ApiClient, Schemas } from '../../client';
import { accountWithCard, expectFieldError, newCustomer, newDebtAccount, unique, UNKNOWN_UUID, type ErrorBody } from '../support/fixtures';
import { sandboxNow } from '../support/sandbox-clock';
import { advanceSandbox } from '../support/sandbox-clock';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
});
afterAll(async () => app?.stop());

const DAY = 86_400_000;

async function account(balance: number, body: Partial<Schemas['DebtAccountCreate']> = {}, client: ApiClient = api) {
  const customer = await newCustomer(client);
  return newDebtAccount(client, customer.id, { external_id: unique('SO'), balance, ...body });
}

const offer = (accountId: string, body: Record<string, unknown>, client: ApiClient = api) =>
  client.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: accountId } }, body: body as Schemas['SettlementOfferCreate'] });

async function made(accountId: string, body: Record<string, unknown>) {
  const { data, response, error } = await offer(accountId, body);
  if (response.status !== 201) throw new Error(`offer failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

const read = async (id: string) => (await api.GET('/settlement-offers/{id}', { params: { path: { id } } })).data!.data;

describe('POST /debt-accounts/{id}/settlement-offers', () => {
  test('a percentage: 201 pending, with the balance, the discount, the settled sum and what the debtor pays', async () => {
    const debt = await account(184_250);
    const created = await made(debt.external_id!, { name: 'Holiday settlement', discount_percentage: 40, months_period: 6 });
    expect(created).toMatchObject({
      debt_account_id: debt.id,
      name: 'Holiday settlement',
      status: 'pending',
      amount: 184_250,
      discount: 73_700,
      discount_percentage: 40,
      discounted_amount: 110_550,
      total_amount: 110_550,
      months_period: 6,
      allowed: ['full_amount', 'payment_plan'],
      expires_at: null,
      accepted_at: null,
      charge_id: null,
      payment_plan_id: null,
    });
    expect(await read(created.id)).toEqual(created);
    const listed = await api.GET('/settlement-offers', { params: { query: { debt_account_id: debt.external_id!, status: 'pending' } } });
    expect(listed.data!.data.map((row) => row.id)).toEqual([created.id]);
    const none = await api.GET('/settlement-offers', { params: { query: { debt_account_id: 'NO-SUCH-ACCOUNT' } } });
    expect(none.data!.data).toEqual([]);
  });

  test('a sum: the percentage it implies, to two decimals; the discount of a percentage is rounded down to the cent', async () => {
    expect(await made((await account(10_000)).id, { discounted_amount: 6_667, months_period: 0 })).toMatchObject({ discount: 3_333, discount_percentage: 33.33, allowed: ['full_amount'] });
    expect(await made((await account(999)).id, { discount_percentage: 33.33, months_period: 0 })).toMatchObject({ discount: 332, discounted_amount: 667 });
  });

  test("the organization's maximum discount (default 80 %) holds at its edge, as a percentage and as a sum", async () => {
    expect((await offer((await account(10_000)).id, { discount_percentage: 80, months_period: 0 })).response.status).toBe(201);
    const over = await offer((await account(10_000)).id, { discount_percentage: 80.01, months_period: 0 });
    expect(over.response.status).toBe(422);
    expectFieldError(over.error, 'discount_percentage');
    expect((await offer((await account(10_000)).id, { discounted_amount: 2_000, months_period: 0 })).response.status).toBe(201);
    const tooSmall = await offer((await account(10_000)).id, { discounted_amount: 1_999, months_period: 0 });
    expect(tooSmall.response.status).toBe(422);
    expectFieldError(tooSmall.error, 'discounted_amount');
  });

  test('the settled sum is 1 cent to the balance less 1 cent', async () => {
    const debt = await account(10_000);
    for (const discounted_amount of [10_000, 10_001]) {
      const { response, error } = await offer(debt.id, { discounted_amount, months_period: 0 });
      expect(response.status).toBe(422);
      expectFieldError(error, 'discounted_amount');
    }
    expect(await made(debt.id, { discounted_amount: 9_999, months_period: 0 })).toMatchObject({ discount: 1, discount_percentage: 0.01 });
    const zero = await offer((await account(10_000)).id, { discounted_amount: 0, months_period: 0 });
    expect(zero.response.status).toBe(422);
    expectFieldError(zero.error, 'discounted_amount');
  });

  test('months_period up to the maximum (default 24), and both maximums follow the settings', async () => {
    expect((await offer((await account(10_000)).id, { discount_percentage: 10, months_period: 24 })).response.status).toBe(201);
    const over = await offer((await account(10_000)).id, { discount_percentage: 10, months_period: 25 });
    expect(over.response.status).toBe(422);
    expectFieldError(over.error, 'months_period');

    const own = api;
    const settings = await own.PUT('/settings', { body: { settlement_max_discount_percentage: 100, settlement_max_months: 36 } });
    expect(settings.data!.data).toMatchObject({ settlement_max_discount_percentage: 100, settlement_max_months: 36 });
    expect((await offer((await account(10_000)).id, { discount_percentage: 10, months_period: 36 })).response.status).toBe(201);
    expect(await made((await account(10_000)).id, { discounted_amount: 1, months_period: 0 })).toMatchObject({ discount: 9_999, discounted_amount: 1 });
    await own.PUT('/settings', { body: { settlement_max_discount_percentage: 80, settlement_max_months: 24 } });
    for (const [body, field] of [
      [{ settlement_max_discount_percentage: 40.005 }, 'settlement_max_discount_percentage'],
      [{ settlement_max_discount_percentage: 100.01 }, 'settlement_max_discount_percentage'],
      [{ settlement_max_months: 121 }, 'settlement_max_months'],
    ] as const) {
      const bad = await own.PUT('/settings', { body });
      expect(bad.response.status).toBe(422);
      expectFieldError(bad.error, field);
    }
    expect((await own.GET('/settings')).data!.data).toMatchObject({ settlement_max_discount_percentage: 80, settlement_max_months: 24 });
  });

  test('every other rule is a 422 on its field, and nothing is made', async () => {
    const debt = await account(10_000);
    const now = await sandboxNow(api);
    const cases: [Record<string, unknown>, string][] = [
      [{ months_period: 0 }, 'discount_percentage'],
      [{ discount_percentage: 10, discounted_amount: 9_000, months_period: 0 }, 'discount_percentage'],
      [{ discount_percentage: 10.005, months_period: 0 }, 'discount_percentage'],
      [{ discount_percentage: 0, months_period: 0 }, 'discount_percentage'],
      [{ discount_percentage: 10, months_period: 0, allowed: ['payment_plan'] }, 'allowed'],
      [{ discount_percentage: 10, months_period: 0, expires_at: new Date(now.getTime() - 1000).toISOString() }, 'expires_at'],
      [{ discount_percentage: 10, months_period: 0, expires_at: new Date(now.getTime() + 366 * DAY).toISOString() }, 'expires_at'],
      [{ discount_percentage: 10, months_period: -1 }, 'months_period'],
    ];
    for (const [body, field] of cases) {
      const { response, error } = await offer(debt.id, body);
      expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), 422]);
      expectFieldError(error, field);
    }
    expect((await api.GET('/settlement-offers', { params: { query: { debt_account_id: debt.id } } })).data!.data).toEqual([]);
    expect((await offer(debt.id, { discount_percentage: 10, months_period: 0, expires_at: new Date(now.getTime() + 365 * DAY).toISOString() })).response.status).toBe(201);
  });

  test('one pending or accepted offer per account: a second is a 409; after a revoke a new one may be made', async () => {
    const debt = await account(10_000);
    const first = await made(debt.id, { discount_percentage: 10, months_period: 0 });
    const second = await offer(debt.id, { discount_percentage: 20, months_period: 0 });
    expect(second.response.status).toBe(409);
    expect((second.error as ErrorBody).errorCode).toBe('conflict');
    const revoked = await api.POST('/settlement-offers/{id}/revoke', { params: { path: { id: first.id } } });
    expect(revoked.data!.data).toMatchObject({ status: 'revoked' });
    expect(revoked.data!.data.ended_at).not.toBeNull();
    expect((await api.POST('/settlement-offers/{id}/revoke', { params: { path: { id: first.id } } })).response.status).toBe(409);
    expect((await offer(debt.id, { discount_percentage: 20, months_period: 0 })).response.status).toBe(201);
  });

  test('a child, a closed account and an unknown one are refused; another tenant sees nothing', async () => {
    const customer = await newCustomer(api);
    const parent = await newDebtAccount(api, customer.id, { external_id: unique('PA'), balance: 0 });
    const child = await newDebtAccount(api, customer.id, { external_id: unique('CH'), balance: 5_000, parent_external_id: parent.external_id! });
    expectFieldError((await offer(child.id, { discount_percentage: 10, months_period: 0 })).error, 'debt_account_id');
    const closed = await account(5_000, { status: 'closed' } as Partial<Schemas['DebtAccountCreate']>);
    expectFieldError((await offer(closed.id, { discount_percentage: 10, months_period: 0 })).error, 'debt_account_id');
    expect((await offer('NO-SUCH-ACCOUNT', { discount_percentage: 10, months_period: 0 })).response.status).toBe(404);

    const mine = await made((await account(10_000)).id, { discount_percentage: 10, months_period: 0 });
    expect((await app.other.GET('/settlement-offers/{id}', { params: { path: { id: mine.id } } })).response.status).toBe(404);
    expect((await app.api.GET('/settlement-offers/{id}', { params: { path: { id: mine.id } } })).response.status).toBe(404);
    expect((await app.other.POST('/settlement-offers/{id}/accept', { params: { path: { id: mine.id } }, body: { option: 'full_amount', payment_method_id: UNKNOWN_UUID } })).response.status).toBe(404);
    expect((await api.GET('/settlement-offers/{id}', { params: { path: { id: UNKNOWN_UUID } } })).response.status).toBe(404);
  });
});

describe('status moves', () => {
  test('pending -> expired at expires_at on the sandbox clock; accepting it then is a 409', async () => {
    const { account: debt, methodId } = await accountWithCard(api, 10_000);
    const expires = new Date((await sandboxNow(api)).getTime() + 2 * DAY).toISOString();
    const created = await made(debt.id, { discount_percentage: 10, months_period: 0, expires_at: expires });
    await advanceSandbox(api, 1);
    expect((await read(created.id)).status).toBe('pending');
    await advanceSandbox(api, 2);
    expect(await read(created.id)).toMatchObject({ status: 'expired', ended_at: expires });
    const accepted = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: created.id } }, body: { option: 'full_amount', payment_method_id: methodId } });
    expect(accepted.response.status).toBe(409);
    expect((await api.POST('/settlement-offers/{id}/revoke', { params: { path: { id: created.id } } })).response.status).toBe(409);
  });

  test('pending -> superseded by a payment; accepting it then is a 409 and charges nothing', async () => {
    const { account: debt, methodId } = await accountWithCard(api, 10_000);
    const created = await made(debt.id, { discount_percentage: 10, months_period: 0 });
    expect((await api.POST('/charges', { body: { amount: 1_000, debt_account_id: debt.id, payment_method_id: methodId } })).response.status).toBe(201);
    expect((await read(created.id)).status).toBe('superseded');
    const accepted = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: created.id } }, body: { option: 'full_amount', payment_method_id: methodId } });
    expect(accepted.response.status).toBe(409);
    expect((await api.GET('/debt-accounts/{id}', { params: { path: { id: debt.id } } })).data!.data.current_balance).toBe(9_000);
  });

  test('pending -> superseded by a refund and by an update of the balance; an update that keeps it does not', async () => {
    const { account: debt, methodId } = await accountWithCard(api, 10_000);
    const charge = (await api.POST('/charges', { body: { amount: 1_000, debt_account_id: debt.id, payment_method_id: methodId } })).data!.data;
    const refunded = await made(debt.id, { discount_percentage: 10, months_period: 0 });
    expect((await api.POST('/charges/{id}/refund', { params: { path: { id: charge.id } }, body: { amount: 500 } })).response.status).toBe(200);
    expect((await read(refunded.id)).status).toBe('superseded');

    const kept = await made(debt.id, { discount_percentage: 10, months_period: 0 });
    await api.PUT('/debt-accounts/{id}', { params: { path: { id: debt.id } }, body: { balance: 10_000, metadata: { note: 'called' } } });
    expect((await read(kept.id)).status).toBe('pending');
    await api.PUT('/debt-accounts/{id}', { params: { path: { id: debt.id } }, body: { balance: 10_000, current_balance: 8_000 } });
    expect((await read(kept.id)).status).toBe('superseded');
  });

  test('accept: an option the offer does not allow is a 422 on option; a plan needs its terms', async () => {
    const { account: debt, methodId } = await accountWithCard(api, 10_000);
    const created = await made(debt.id, { discount_percentage: 10, months_period: 0 });
    const wrong = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: created.id } }, body: { option: 'payment_plan', payment_method_id: methodId } });
    expect(wrong.response.status).toBe(422);
    expectFieldError(wrong.error, 'option');
    expectFieldError(wrong.error, 'frequency');
    expectFieldError(wrong.error, 'start_date');
    const none = await api.POST('/settlement-offers/{id}/accept', { params: { path: { id: created.id } }, body: { option: 'full_amount' } });
    expectFieldError(none.error, 'payment_method_id');
    expect((await read(created.id)).status).toBe('pending');
  });
});
