/**
 * Plans that run by themselves, watched through the sandbox clock: each instalment charged
 * on its date through the payments service, declines retried, a plan that defaults, and the
 * plan's account changed under it (cancel, update, paid off by a one-time charge).
 */
import type { ApiClient } from '../../client';
import { balanceOf, newCustomer, newDebtAccount, unique, testCard } from '../support/fixtures';
import type { TestApp } from '../support/test-app';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import { advanceSandbox, sandboxToday } from '../support/sandbox-clock';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

const card = testCard;
const GOOD = '4242424242424242';
const DECLINED = '4000000000000002';

async function method(customerId: string, number: string): Promise<string> {
  const { data, response } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customerId } }, body: { card: card(number) } });
  expect(response.status).toBe(201);
  return data!.data.id;
}

/** A customer with an account of `balance` and a weekly plan of `amount` from today on the card `number`. */
async function weeklyPlan(balance: number, amount: number, number = GOOD) {
  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance });
  const methodId = await method(customer.id, number);
  const { data, response, error } = await api.POST('/payment-plans', {
    body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: await sandboxToday(api), amount },
  });
  if (response.status !== 201) throw new Error(JSON.stringify(error));
  return { customer, account, methodId, plan: data!.data };
}

const planNow = async (id: string) => (await api.GET('/payment-plans/{id}', { params: { path: { id } } })).data!.data;
const chargesOf = async (accountId: string) => (await api.GET('/charges', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data;

describe('a weekly plan through the sandbox clock', () => {
  test('15 days on: three instalments charged, the balance lowered three times, the events in the order of the instalments', async () => {
    const { account, plan } = await weeklyPlan(40_000, 10_000);
    expect(plan.charges).toHaveLength(4);
    await advanceSandbox(api, 15);

    const after = await planNow(plan.id);
    expect(after.charges.map((c) => [c.status, c.attempts])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['succeeded', 1],
      ['pending', 0],
    ]);
    expect(after).toMatchObject({ status: 'active', charges_total_amount: 30_000 });
    expect(await balanceOf(api, account.id)).toBe(10_000);

    const charges = await chargesOf(account.id);
    expect(charges).toHaveLength(3);
    for (const charge of charges) expect(charge).toMatchObject({ status: 'succeeded', amount: 10_000, source: 'payment_plan', payment_plan_uuid: plan.id });
    expect(charges.map((c) => c.payment_plan_charge_uuid).sort()).toEqual(plan.charges.slice(0, 3).map((c) => c.id).sort());

    // The events, as recorded for delivery, follow the instalments: one charge each, in order.
    const succeeded = await outboxEvents(app, 'charge.succeeded', (d) => d.debt_account?.id === account.id || d.debt_account_id === account.id);
    expect(succeeded.map((d) => d.payment_plan_charge_uuid)).toEqual(plan.charges.slice(0, 3).map((c) => c.id));
    const balances = (await outboxEvents(app, 'debt-account.update', (d) => d.id === account.id)).map((d) => d.current_balance);
    expect(balances).toEqual([30_000, 20_000, 10_000]);
    const updates = await outboxEvents(app, 'payment-plan.update', (d) => d.id === plan.id);
    expect(updates.map((d) => d.charges.filter((c: { status: string }) => c.status === 'succeeded').length)).toEqual([1, 2, 3]);

    // Nothing is charged twice by moving on again.
    await advanceSandbox(api, 1);
    expect(await chargesOf(account.id)).toHaveLength(3);
  });

  test('a decline is retried 3 days later; with another card attached meanwhile, the retry succeeds', async () => {
    const { customer, account, plan } = await weeklyPlan(20_000, 10_000, DECLINED);
    await advanceSandbox(api, 1);
    let now = await planNow(plan.id);
    expect(now.charges[0]).toMatchObject({ status: 'pending', attempts: 1, error_code: 'card_declined' });
    expect(await balanceOf(api, account.id)).toBe(20_000);

    const good = await method(customer.id, GOOD);
    await api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { payment_method_id: good } });
    await advanceSandbox(api, 3);
    now = await planNow(plan.id);
    expect(now.charges[0]).toMatchObject({ status: 'succeeded', attempts: 2, error_code: null });
    expect(await balanceOf(api, account.id)).toBe(10_000);
    const charges = await chargesOf(account.id);
    expect(charges.map((c) => c.status).sort()).toEqual(['failed', 'succeeded']);
  });

  test('three failed attempts in a row default the plan: its pending instalments are canceled', async () => {
    const { account, plan } = await weeklyPlan(30_000, 10_000, DECLINED);
    await advanceSandbox(api, 7);
    const defaulted = await planNow(plan.id);
    expect(defaulted.status).toBe('defaulted');
    expect(defaulted.charges[0]).toMatchObject({ status: 'failed', attempts: 3 });
    expect(defaulted.charges.slice(1).every((c) => c.status === 'canceled' || c.status === 'failed')).toBe(true);
    await advanceSandbox(api, 14);
    expect((await chargesOf(account.id)).filter((c) => c.status === 'failed')).toHaveLength(3);
    const statuses = (await outboxEvents(app, 'payment-plan.update', (d) => d.id === plan.id)).map((d) => d.status);
    expect(statuses.at(-1)).toBe('defaulted');
  });

  test('canceled mid-way: no more charges', async () => {
    const { account, plan } = await weeklyPlan(30_000, 10_000);
    await advanceSandbox(api, 1);
    await api.DELETE('/payment-plans/{id}', { params: { path: { id: plan.id } } });
    await advanceSandbox(api, 21);
    expect(await chargesOf(account.id)).toHaveLength(1);
    expect(await balanceOf(api, account.id)).toBe(20_000);
  });

  test('updated mid-way: the rest of the balance in instalments of the new amount', async () => {
    const { account, plan } = await weeklyPlan(30_000, 10_000);
    await advanceSandbox(api, 1);
    const { data } = await api.PUT('/payment-plans/{id}', { params: { path: { id: plan.id } }, body: { amount: 15_000 } });
    expect(data!.data.charges.filter((c) => c.status === 'pending').map((c) => c.amount)).toEqual([15_000, 5_000]);
    await advanceSandbox(api, 14);
    expect(await balanceOf(api, account.id)).toBe(0);
    expect((await planNow(plan.id)).status).toBe('completed');
  });

  test('paid off by a one-time charge mid-plan: the plan completes at once, with its payment-plan.update, and charges nothing more', async () => {
    const { account, plan, methodId } = await weeklyPlan(30_000, 10_000);
    await advanceSandbox(api, 1);
    const once = await api.POST('/charges', { body: { amount: 20_000, debt_account_id: account.id, payment_method_id: methodId } });
    expect(once.response.status).toBe(201);
    // In the charge's own transaction, not at the next due date.
    const completed = await planNow(plan.id);
    expect(completed.status).toBe('completed');
    expect(completed.charges.filter((c) => c.status === 'pending')).toHaveLength(0);
    expect((await outboxEvents(app, 'payment-plan.update', (d) => d.id === plan.id)).at(-1)).toMatchObject({ status: 'completed' });
    await advanceSandbox(api, 8);
    expect((await planNow(plan.id)).status).toBe('completed');
    expect(await chargesOf(account.id)).toHaveLength(2);
  });
});
