/**
 * Scheduled charges as an integrator sees them in the sandbox, watched through the sandbox
 * clock: today charges at once, a later day is `scheduled` and carried out on its day exactly
 * once, cancel and its 409s, an account closed meanwhile, a decline that is not retried; and
 * the clock's advance settling ACH debits and reopening a returned ACH instalment.
 */
import type { ApiClient } from '../../client';
import { accountWithCard, balanceOf, expectFieldError, newCustomer, newDebtAccount, testAch, unique, UNKNOWN_UUID, testCard } from '../support/fixtures';
import type { TestApp } from '../support/test-app';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import { advanceSandbox, sandboxDayAfter, sandboxToday } from '../support/sandbox-clock';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

const card = testCard;
const charge = (body: Record<string, unknown>) => api.POST('/charges', { body: body as never });
const chargeNow = async (id: string) => (await api.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
const cancel = (id: string) => api.POST('/charges/{id}/cancel', { params: { path: { id } } });

describe('POST /charges with scheduled_at', () => {
  test('today charges at once', async () => {
    const { account, methodId } = await accountWithCard(api);
    const { data, response } = await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: await sandboxToday(api) });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({ status: 'succeeded', scheduled_at: null });
    expect(await balanceOf(api, account.id)).toBe(7500);
  });

  test('tomorrow: 201 scheduled, nothing moves; on its day it is carried out once, with its events', async () => {
    const { account, methodId } = await accountWithCard(api);
    const tomorrow = await sandboxDayAfter(api, 1);
    const { data, response } = await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: tomorrow });
    expect(response.status).toBe(201);
    const id = data!.data.id;
    expect(data!.data).toMatchObject({ status: 'scheduled', scheduled_at: tomorrow, settled_at: null, amount: 2500 });
    expect(await balanceOf(api, account.id)).toBe(10_000);
    const listed = await api.GET('/charges', { params: { query: { debt_account_id: account.id, status: 'scheduled' } } });
    expect(listed.data!.data.map((c) => c.id)).toEqual([id]);
    const [created] = await outboxEvents(app, 'scheduled-charge.create', id);
    expect(created).toMatchObject({ scheduled_at: `${tomorrow} 14:00:00`, successfully_charged_at: null, charge: null, amount: 2500 });
    expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(0);

    await advanceSandbox(api, 2);
    expect(await chargeNow(id)).toMatchObject({ status: 'succeeded', scheduled_at: tomorrow, amount: 2500 });
    expect(await balanceOf(api, account.id)).toBe(7500);
    const [succeeded] = await outboxEvents(app, 'charge.succeeded', id);
    expect(succeeded).toMatchObject({ success: true, scheduled_charge_uuid: id });
    const [updated] = await outboxEvents(app, 'scheduled-charge.update', id);
    expect(updated).toMatchObject({ successfully_charged_at: `${tomorrow} 14:00:00`, charge: { id, success: true } });

    // Moving on again does nothing more: one run, one gateway payment.
    await advanceSandbox(api, 3);
    expect(await app.db('scheduled_charge_runs').where({ charge_id: id }).count('* as count')).toEqual([{ count: '1' }]);
    expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(1);
    expect(await balanceOf(api, account.id)).toBe(7500);
  });

  test('a past day, or a later day without a saved method, is a 422 on scheduled_at; the other rules are checked now', async () => {
    const { account, methodId } = await accountWithCard(api);
    const yesterday = await sandboxDayAfter(api, -1);
    expectFieldError((await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: yesterday })).error, 'scheduled_at');
    expectFieldError((await charge({ amount: 2500, debt_account_id: account.id, card: card(), scheduled_at: await sandboxDayAfter(api, 1) })).error, 'scheduled_at');
    expectFieldError((await charge({ amount: 20_000, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 1) })).error, 'amount');
    const saved = await charge({ amount: 2500, debt_account_id: account.id, card: card(), save_payment_method: true, scheduled_at: await sandboxDayAfter(api, 1) });
    expect(saved.response.status).toBe(201);
    expect(saved.data!.data).toMatchObject({ status: 'scheduled', payment_method_id: expect.any(String) });
    expect(await balanceOf(api, account.id)).toBe(10_000);
  });

  test('a declined card on its day: failed, scheduled-charge.update with the failure, not retried', async () => {
    const { account, methodId } = await accountWithCard(api, 10_000, {}, '4000000000000002');
    const { data } = await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 1) });
    const id = data!.data.id;
    await advanceSandbox(api, 2);
    expect(await chargeNow(id)).toMatchObject({ status: 'failed', error_code: 'card_declined' });
    const [updated] = await outboxEvents(app, 'scheduled-charge.update', id);
    expect(updated).toMatchObject({ successfully_charged_at: null, charge: { success: false, error_code: 'card_declined' } });
    await advanceSandbox(api, 7);
    expect(await outboxEvents(app, 'charge.failed', id)).toHaveLength(1);
    expect(await balanceOf(api, account.id)).toBe(10_000);
  });
});

describe('POST /charges/{id}/cancel', () => {
  test('cancels a scheduled charge (scheduled-charge.delete); a second cancel and a succeeded charge are 409; it never runs', async () => {
    const { account, methodId } = await accountWithCard(api);
    const { data } = await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 1) });
    const id = data!.data.id;
    const canceled = await cancel(id);
    expect(canceled.response.status).toBe(200);
    expect(canceled.data!.data).toMatchObject({ id, status: 'canceled' });
    expect(await outboxEvents(app, 'scheduled-charge.delete', id)).toHaveLength(1);
    const voided = await api.POST('/charges/{id}/void', { params: { path: { id } } });
    expect(voided.response.status).toBe(409);
    const again = await cancel(id);
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ errorCode: 'conflict' });

    const now = await charge({ amount: 1000, debt_account_id: account.id, payment_method_id: methodId });
    expect(now.data!.data.status).toBe('succeeded');
    expect((await cancel(now.data!.data.id)).response.status).toBe(409);
    expect((await cancel(UNKNOWN_UUID)).response.status).toBe(404);

    await advanceSandbox(api, 2);
    expect(await chargeNow(id)).toMatchObject({ status: 'canceled' });
    expect(await balanceOf(api, account.id)).toBe(9000);
  });

  test('an account closed before the day: the scheduled charge is canceled, not charged', async () => {
    const { account, methodId } = await accountWithCard(api);
    const { data } = await charge({ amount: 2500, debt_account_id: account.id, payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 1) });
    const id = data!.data.id;
    const closed = await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 10_000, status: 'closed' } });
    expect(closed.response.status).toBe(200);
    await advanceSandbox(api, 2);
    expect(await chargeNow(id)).toMatchObject({ status: 'canceled', error: null });
    expect(await outboxEvents(app, 'scheduled-charge.delete', id)).toHaveLength(1);
    expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(0);
    expect(await balanceOf(api, account.id)).toBe(10_000);
  });
});

describe('the sandbox clock and ACH', () => {
  test('moving the clock past the settlement time settles a pending debit, and returns one whose bank returns it', async () => {
    const customer = await newCustomer(api);
    const good = await newDebtAccount(api, customer.id, { balance: 4000, external_id: unique('DA') });
    const bounced = await newDebtAccount(api, customer.id, { balance: 4000, external_id: unique('DA') });
    const settles = await charge({ amount: 4000, debt_account_id: good.id, ach: testAch('000123456789') });
    const returns = await charge({ amount: 4000, debt_account_id: bounced.id, ach: testAch('000222222227') });
    expect([settles.data!.data.status, returns.data!.data.status]).toEqual(['pending', 'pending']);
    await advanceSandbox(api, 1);
    expect((await chargeNow(settles.data!.data.id)).status).toBe('pending');
    await advanceSandbox(api, 2);
    expect(await chargeNow(settles.data!.data.id)).toMatchObject({ status: 'succeeded', settled_at: expect.any(String) });
    expect(await chargeNow(returns.data!.data.id)).toMatchObject({ status: 'returned', return_code: 'R01' });
    expect(await balanceOf(api, good.id)).toBe(0);
    expect(await balanceOf(api, bounced.id)).toBe(4000);
  });

  test('a returned ACH instalment is reopened as a failed attempt and retried', async () => {
    const customer = await newCustomer(api);
    const account = await newDebtAccount(api, customer.id, { balance: 20_000, external_id: unique('DA') });
    const method = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { ach: testAch('000222222227') } });
    const plan = await api.POST('/payment-plans', {
      body: { debt_account_id: account.id, payment_method_id: method.data!.data.id, frequency: 'monthly', start_date: await sandboxToday(api), amount: 10_000 },
    });
    expect(plan.response.status).toBe(201);
    const planId = plan.data!.data.id;
    // Charged today at 14:00 (pending), returned two days later at 14:00, retried 3 days after its date.
    const { response } = await api.POST('/sandbox/clock', { body: { advance_to: `${await sandboxDayAfter(api, 2)}T15:00:00.000Z` } });
    expect(response.status).toBe(200);
    const now = (await api.GET('/payment-plans/{id}', { params: { path: { id: planId } } })).data!.data;
    const charges = await api.GET('/charges', { params: { query: { debt_account_id: account.id } } });
    expect(charges.data!.data.map((c) => [c.status, c.return_code])).toEqual([['returned', 'R01']]);
    expect(now.charges[0]).toMatchObject({ status: 'pending', attempts: 1, error_code: 'R01' });
    expect(now.status).toBe('active');
    expect(await balanceOf(api, account.id)).toBe(20_000);
  });
});
