/**
 * Payment plans through the API (tag Payment plans): creation and its rules at their edges,
 * the schedule a user reads back, update and cancel, and the plan a debt account was created
 * with, enrolled later.
 */
import type { ApiClient, Schemas } from '../../client';
import { expectFieldError, newCustomer, newDebtAccount, unique, UNKNOWN_UUID, type ErrorBody } from '../support/fixtures';
import { dateOf } from '../support/dates';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const DAY = 86_400_000;
const inDays = (days: number) => dateOf(new Date(app.clock.now().getTime() + days * DAY));

async function card(api: ApiClient, customerId: string) {
  const { data, response } = await api.POST('/customers/{id}/payment-methods', {
    params: { path: { id: customerId } },
    body: {
      card: {
        card_holder: 'Maria Gonzalez',
        card_number: '4242424242424242',
        card_expiration_month: 8,
        card_expiration_year: (app.clock.now().getUTCFullYear() + 3) % 100,
        card_security_code: '123',
        card_postal_code: '78704',
      },
    },
  });
  expect(response.status).toBe(201);
  return data!.data;
}

/** A customer with a saved card and an account of `balance`. */
async function payer(balance = 25_050, account: Partial<Schemas['DebtAccountCreate']> = {}, api: ApiClient = app.api) {
  const customer = await newCustomer(api);
  const method = await card(api, customer.id);
  const debt = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance, ...account });
  return { customer, method, account: debt };
}

async function createPlan(body: Schemas['PaymentPlanEnrollment'], api: ApiClient = app.api) {
  const { data, response, error } = await api.POST('/payment-plans', { body });
  if (response.status !== 201) throw new Error(`plan create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

describe('POST /payment-plans', () => {
  test('with a payment method, the plan is active and its schedule covers the balance, the remainder last', async () => {
    const { account, method } = await payer(25_050);
    const start = inDays(2);
    const plan = await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: start, amount: 10_000 });
    expect(plan).toMatchObject({ status: 'active', debt_account_id: account.id, payment_method_id: method.id, amount: 10_000, frequency: 'weekly', canceled_at: null, charges_total_amount: 0 });
    expect(plan.enrolled_at).toBe(app.clock.now().toISOString());
    expect(plan.charges.map((c) => [c.charge_date, c.amount, c.status, c.attempts])).toEqual([
      [start, 10_000, 'pending', 0],
      [inDays(9), 10_000, 'pending', 0],
      [inDays(16), 5_050, 'pending', 0],
    ]);
    expect(plan.end_date).toBe(inDays(16));

    const read = await app.api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } });
    expect(read.data!.data).toEqual(plan);
    const viaAccount = await app.api.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } });
    expect(viaAccount.data!.data.payment_plan).toMatchObject({ id: plan.id, status: 'active' });
  });

  test('without a payment method, the plan is pending_enrollment with no schedule', async () => {
    const { account } = await payer(30_000);
    const plan = await createPlan({ debt_account_id: account.external_id!, frequency: 'monthly', start_date: inDays(0), amount: 10_000 });
    expect(plan).toMatchObject({ status: 'pending_enrollment', payment_method_id: null, enrolled_at: null, charges: [], end_date: null });
  });

  test('one open plan per account: a second one is a 409', async () => {
    const { account, method } = await payer();
    await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'monthly', start_date: inDays(1), amount: 10_000 });
    const again = await app.api.POST('/payment-plans', { body: { debt_account_id: account.id, frequency: 'weekly', start_date: inDays(1), amount: 5_000 } });
    expect(again.response.status).toBe(409);
    expect((again.error as ErrorBody).errorCode).toBe('conflict');
  });

  test('two plans created at once for one account: exactly one is made', async () => {
    const { account } = await payer();
    const body = { debt_account_id: account.id, frequency: 'weekly' as const, start_date: inDays(1), amount: 5_000 };
    const answers = await Promise.all([0, 1, 2].map(() => app.api.POST('/payment-plans', { body })));
    expect(answers.map((a) => a.response.status).sort()).toEqual([201, 409, 409]);
  });

  test('amount at its edges: the minimum payment, the balance, 120 instalments', async () => {
    const { account } = await payer(120_000, { rules: { min_payment_amount: 2_500 } });
    const at = (amount: number) => app.api.POST('/payment-plans', { body: { debt_account_id: account.id, frequency: 'weekly', start_date: inDays(1), amount } });
    for (const amount of [2_499, 120_001]) {
      const refused = await at(amount);
      expect(refused.response.status).toBe(422);
      expectFieldError(refused.error, 'amount');
    }
    const { account: big } = await payer(1_000_000);
    const tooMany = await app.api.POST('/payment-plans', { body: { debt_account_id: big.id, frequency: 'weekly', start_date: inDays(1), amount: 8_333 } });
    expect(tooMany.response.status).toBe(422);
    expectFieldError(tooMany.error, 'amount');
    const justEnough = await app.api.POST('/payment-plans', { body: { debt_account_id: big.id, frequency: 'weekly', start_date: inDays(1), amount: 8_334 } });
    expect(justEnough.response.status).toBe(201);

    // The whole balance in one instalment, and the minimum exactly.
    expect((await at(120_000)).response.status).toBe(201);
    const { account: other, method } = await payer(120_000, { rules: { min_payment_amount: 2_500 } });
    const minimum = await app.api.POST('/payment-plans', { body: { debt_account_id: other.id, payment_method_id: method.id, frequency: 'last_of_month', start_date: inDays(1), amount: 2_500 } });
    expect(minimum.response.status).toBe(201);
    expect(minimum.data!.data.charges).toHaveLength(48);
  });

  test('start_date from today to 365 days ahead', async () => {
    const { account } = await payer();
    for (const start of [inDays(-1), inDays(366)]) {
      const refused = await app.api.POST('/payment-plans', { body: { debt_account_id: account.id, frequency: 'weekly', start_date: start, amount: 5_000 } });
      expect(refused.response.status).toBe(422);
      expectFieldError(refused.error, 'start_date');
    }
    expect((await app.api.POST('/payment-plans', { body: { debt_account_id: account.id, frequency: 'weekly', start_date: inDays(365), amount: 5_000 } })).response.status).toBe(201);
  });

  test('the account: unknown, another tenant\'s, a child, without billing_type payment-plan, paid off; the method: another customer\'s', async () => {
    const body = (debt_account_id: string) => ({ debt_account_id, frequency: 'weekly' as const, start_date: inDays(1), amount: 5_000 });
    const { account, customer } = await payer();
    const theirs = await payer(25_050, {}, app.other);
    const child = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), parent_external_id: account.external_id!, balance: 1_000 });
    const noPlans = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), billing_type: ['full-amount-payment'] });
    const empty = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), balance: 0 });
    for (const key of [UNKNOWN_UUID, theirs.account.id, child.id, noPlans.id, empty.id]) {
      const refused = await app.api.POST('/payment-plans', { body: body(key) });
      expect(refused.response.status).toBe(422);
      expectFieldError(refused.error, 'debt_account_id');
    }
    const stranger = await payer();
    const wrongMethod = await app.api.POST('/payment-plans', { body: { ...body(account.id), payment_method_id: stranger.method.id } });
    expect(wrongMethod.response.status).toBe(422);
    expectFieldError(wrongMethod.error, 'payment_method_id');
  });
});

describe('GET /payment-plans', () => {
  test('pages newest first, filtered by account and status; another tenant sees none of them', async () => {
    const { account, method } = await payer();
    const first = await createPlan({ debt_account_id: account.id, frequency: 'weekly', start_date: inDays(1), amount: 5_000 });
    await app.api.DELETE('/payment-plans/{id}', { params: { path: { id: first.id } } });
    const second = await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: inDays(1), amount: 5_000 });

    const ofAccount = await app.api.GET('/payment-plans', { params: { query: { debt_account_id: account.external_id! } } });
    expect(ofAccount.data!.data.map((p) => [p.id, p.status])).toEqual([
      [second.id, 'active'],
      [first.id, 'canceled'],
    ]);
    const canceled = await app.api.GET('/payment-plans', { params: { query: { debt_account_id: account.id, status: 'canceled' } } });
    expect(canceled.data!.data.map((p) => p.id)).toEqual([first.id]);
    const unknown = await app.api.GET('/payment-plans', { params: { query: { debt_account_id: 'NO-SUCH-ACCOUNT' } } });
    expect(unknown.data!.meta.total).toBe(0);

    const theirs = await app.other.GET('/payment-plans/{id}', { params: { path: { id: second.id } } });
    expect(theirs.response.status).toBe(404);
    const malformed = await app.api.GET('/payment-plans/{id}', { params: { path: { id: 'not-a-uuid' } } });
    expect(malformed.response.status).toBe(422);
  });
});

describe('PUT /payment-plans/{id}', () => {
  test('a new amount and frequency recompute the schedule from the next unpaid instalment', async () => {
    const { account, method } = await payer(30_000);
    const plan = await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: inDays(3), amount: 10_000 });
    const { data, response } = await app.api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { amount: 20_000, frequency: 'every_other_week' } });
    expect(response.status).toBe(200);
    const updated = data!.data;
    expect(updated).toMatchObject({ amount: 20_000, frequency: 'every_other_week', status: 'active' });
    const live = updated.charges.filter((c) => c.status === 'pending');
    expect(live.map((c) => [c.charge_date, c.amount])).toEqual([
      [inDays(3), 20_000],
      [inDays(17), 10_000],
    ]);
    expect(updated.charges.filter((c) => c.status === 'canceled')).toHaveLength(3);
  });

  test('a plan proposed on create debt account is enrolled when a payment method is attached', async () => {
    const customer = await newCustomer(app.api);
    const method = await card(app.api, customer.id);
    const account = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), balance: 20_000, payment_plan: { frequency: 'monthly', start_date: inDays(5), amount: 15_000 } });
    const listed = await app.api.GET('/payment-plans', { params: { query: { debt_account_id: account.id } } });
    const pending = listed.data!.data[0]!;
    expect(pending).toMatchObject({ status: 'pending_enrollment', charges: [] });

    const { data } = await app.api.PUT('/payment-plans/{id}', { params: { path: { id: pending.id } }, body: { payment_method_id: method.id } });
    expect(data!.data).toMatchObject({ status: 'active', payment_method_id: method.id });
    expect(data!.data.charges.map((c) => [c.charge_date, c.amount])).toEqual([
      [inDays(5), 15_000],
      [dateOf(monthLater(inDays(5))), 5_000],
    ]);
  });

  test('an open plan only: a canceled one is a 409; bad terms are a 422 and change nothing', async () => {
    const { account, method } = await payer();
    const plan = await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: inDays(1), amount: 5_000 });
    const bad = await app.api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { amount: 999_999, start_date: inDays(-3) } });
    expect(bad.response.status).toBe(422);
    expectFieldError(bad.error, 'amount');
    expectFieldError(bad.error, 'start_date');
    expect((await app.api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } })).data!.data).toEqual(plan);

    await app.api.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } });
    const late = await app.api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { amount: 6_000 } });
    expect(late.response.status).toBe(409);
  });
});

describe('DELETE /payment-plans/{id}', () => {
  test('cancels: status canceled, canceled_at set, pending instalments canceled; twice is a 409', async () => {
    const { account, method } = await payer();
    const plan = await createPlan({ debt_account_id: account.id, payment_method_id: method.id, frequency: 'weekly', start_date: inDays(1), amount: 10_000 });
    const deleted = await app.api.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } });
    expect(deleted.response.status).toBe(200);
    expect(deleted.data).toEqual({ success: true });
    const read = (await app.api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } })).data!.data;
    expect(read).toMatchObject({ status: 'canceled', canceled_at: app.clock.now().toISOString() });
    expect(read.charges.every((c) => c.status === 'canceled')).toBe(true);
    expect((await app.api.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } })).response.status).toBe(409);
    expect((await app.other.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } })).response.status).toBe(404);
  });
});

function monthLater(date: string): Date {
  const d = new Date(`${date}T00:00:00.000Z`);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 0)).getUTCDate();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, Math.min(d.getUTCDate(), last)));
}
