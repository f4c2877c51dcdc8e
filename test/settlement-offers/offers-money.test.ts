/**
 * The money of a settlement (tag Settlement offers): the settled sum paid at once, on a later
 * day and by a plan run through the sandbox clock, each ending `completed` with the rest
 * written off exactly and the account `paid_off`; a plan that defaults breaks the offer and
 * writes nothing off; a card declined at acceptance leaves it pending.
 */
import type { ApiClient, Schemas } from '../../client';
import { accountOf, accountWithCard, expectFieldError, testCard, type ErrorBody } from '../support/fixtures';
import { advanceSandbox, sandboxDayAfter, sandboxToday } from '../support/sandbox-clock';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
});
afterAll(async () => app?.stop());

async function offerOn(accountId: string, body: Record<string, unknown>) {
  const { data, response, error } = await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: accountId } }, body: body as Schemas['SettlementOfferCreate'] });
  if (response.status !== 201) throw new Error(`offer failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

const accept = (id: string, body: Record<string, unknown>) => api.POST('/settlement-offers/{id}/accept', { params: { path: { id } }, body: body as Schemas['SettlementOfferAccept'] });
const read = async (id: string) => (await api.GET('/settlement-offers/{id}', { params: { path: { id } } })).data!.data;
const transactions = async (accountId: string) =>
  (await api.GET('/transactions', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data.map((row) => [row.type, row.status, row.amount]).sort();

describe('the settled sum in one payment', () => {
  test('paid now: completed at once, the rest written off exactly, the account paid off', async () => {
    const { account, methodId } = await accountWithCard(api, 184_250);
    const offer = await offerOn(account.id, { discount_percentage: 40, months_period: 0 });
    const { data, response } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ status: 'completed', accepted_option: 'full_amount' });
    expect(data!.data.charge_id).not.toBeNull();
    const charge = (await api.GET('/charges/{id}', { params: { path: { id: data!.data.charge_id! } } })).data!.data;
    expect(charge).toMatchObject({ amount: 110_550, status: 'succeeded', source: 'settlement_offer' });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    expect(await transactions(account.id)).toEqual([
      ['charge', 'succeeded', 110_550],
      ['settlement_write_off', 'succeeded', 73_700],
    ]);
    expect((await read(offer.id)).completed_at).not.toBeNull();
    // Paid off: nothing more is taken.
    expect((await api.POST('/charges', { body: { amount: 100, debt_account_id: account.id, payment_method_id: methodId } })).response.status).toBe(422);
  });

  test('a settlement of 1 cent: one charge of 1 cent, the rest written off', async () => {
    await api.PUT('/settings', { body: { settlement_max_discount_percentage: 100 } });
    const { account, methodId } = await accountWithCard(api, 100_000_000_000);
    const offer = await offerOn(account.id, { discounted_amount: 1, months_period: 0 });
    const { data } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId });
    await api.PUT('/settings', { body: { settlement_max_discount_percentage: 80 } });
    expect(data!.data.status).toBe('completed');
    expect(await transactions(account.id)).toEqual([
      ['charge', 'succeeded', 1],
      ['settlement_write_off', 'succeeded', 99_999_999_999],
    ]);
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
  });

  test('on a later day: accepted with its scheduled charge; only the settled sum may be paid meanwhile; completed on that day', async () => {
    const { account, methodId } = await accountWithCard(api, 50_000);
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 0 });
    const day = await sandboxDayAfter(api, 5);
    const { data } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId, scheduled_at: day });
    expect(data!.data).toMatchObject({ status: 'accepted', accepted_option: 'full_amount', completed_at: null });
    const scheduled = (await api.GET('/charges/{id}', { params: { path: { id: data!.data.charge_id! } } })).data!.data;
    expect(scheduled).toMatchObject({ status: 'scheduled', amount: 25_000, scheduled_at: day });
    // The payment terms ask the settled sum now, not the balance.
    const tooMuch = await api.POST('/charges', { body: { amount: 25_001, debt_account_id: account.id, payment_method_id: methodId } });
    expect(tooMuch.response.status).toBe(422);
    expectFieldError(tooMuch.error, 'amount');
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 50_000, status: 'active' });

    await advanceSandbox(api, 6);
    expect(await read(offer.id)).toMatchObject({ status: 'completed' });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    expect(await transactions(account.id)).toEqual([
      ['charge', 'succeeded', 25_000],
      ['settlement_write_off', 'succeeded', 25_000],
    ]);
  });

  test('on a later day, declined on that day: the offer is broken, nothing written off, the whole balance owed', async () => {
    const { account, methodId } = await accountWithCard(api, 50_000, {}, '4000000000000002');
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 0 });
    const { data } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 2) });
    expect(data!.data.status).toBe('accepted');
    await advanceSandbox(api, 3);
    expect((await api.GET('/charges/{id}', { params: { path: { id: data!.data.charge_id! } } })).data!.data).toMatchObject({ status: 'failed', error_code: 'card_declined' });
    expect(await read(offer.id)).toMatchObject({ status: 'broken', completed_at: null });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 50_000, status: 'active' });
    expect((await transactions(account.id)).filter(([type]) => type === 'settlement_write_off')).toEqual([]);
  });

  test('on a later day, its method deleted meanwhile: refused on that day without the gateway, the offer broken', async () => {
    const { account, methodId } = await accountWithCard(api, 50_000);
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 0 });
    const { data } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 2) });
    expect((await api.DELETE('/payment-methods/{id}', { params: { path: { id: methodId } } })).response.status).toBe(200);
    await advanceSandbox(api, 3);
    expect((await api.GET('/charges/{id}', { params: { path: { id: data!.data.charge_id! } } })).data!.data).toMatchObject({ status: 'failed', error_code: 'no_payment_method' });
    expect(await read(offer.id)).toMatchObject({ status: 'broken' });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 50_000, status: 'active' });
  });

  test('a card declined at acceptance: 400 with the decline, the offer pending again, nothing owed differently', async () => {
    const { account, methodId } = await accountWithCard(api, 20_000, {}, '4000000000000002');
    const offer = await offerOn(account.id, { discount_percentage: 25, months_period: 0 });
    const { response, error } = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId });
    expect(response.status).toBe(400);
    expect(error as ErrorBody & { charge_id: string }).toMatchObject({ errorCode: 'card_declined' });
    expect(await read(offer.id)).toMatchObject({ status: 'pending', accepted_at: null, charge_id: null });
    // The whole balance is owed again: a charge of more than the settled sum is taken.
    const card = await api.POST('/charges', { body: { amount: 16_000, debt_account_id: account.id, card: testCard() } });
    expect(card.response.status).toBe(201);
  });
});

describe('the settled sum by a plan', () => {
  test('the default split ends within months_period, remainder last; run through the sandbox clock to completed', async () => {
    const { account, methodId } = await accountWithCard(api, 100_002);
    const offer = await offerOn(account.id, { discount_percentage: 40, months_period: 3 });
    expect(offer.discounted_amount).toBe(60_002);
    const start = await sandboxToday(api);
    const { data, response } = await accept(offer.id, { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: start });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ status: 'accepted', accepted_option: 'payment_plan' });
    const plan = (await api.GET('/payment-plans/{id}', { params: { path: { id: data!.data.payment_plan_id! } } })).data!.data;
    expect(plan.charges.map((c) => c.amount)).toEqual([20_001, 20_001, 20_000]);

    await advanceSandbox(api, 1);
    expect((await read(offer.id)).status).toBe('accepted');
    await advanceSandbox(api, 65);
    expect(await read(offer.id)).toMatchObject({ status: 'completed' });
    expect((await api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } })).data!.data.status).toBe('completed');
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    const moved = await transactions(account.id);
    expect(moved.filter(([type]) => type === 'charge')).toEqual([
      ['charge', 'succeeded', 20_000],
      ['charge', 'succeeded', 20_001],
      ['charge', 'succeeded', 20_001],
    ]);
    expect(moved.filter(([type]) => type === 'settlement_write_off')).toEqual([['settlement_write_off', 'succeeded', 40_000]]);
  });

  test('at the maximum: the largest balance, the maximum discount and months: 24 instalments summing to the settled sum, the remainder last', async () => {
    const { account, methodId } = await accountWithCard(api, 100_000_000_000);
    const offer = await offerOn(account.id, { discount_percentage: 80, months_period: 24 });
    expect(offer).toMatchObject({ discount: 80_000_000_000, discounted_amount: 20_000_000_000 });
    const { data } = await accept(offer.id, { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxToday(api) });
    const plan = (await api.GET('/payment-plans/{id}', { params: { path: { id: data!.data.payment_plan_id! } } })).data!.data;
    const amounts = plan.charges.map((c) => c.amount);
    expect(amounts).toEqual([...Array(23).fill(833_333_334), 20_000_000_000 - 23 * 833_333_334]);
  });

  test('an instalment that would run past months_period is a 422 on instalment_amount; one that fits is taken', async () => {
    const { account, methodId } = await accountWithCard(api, 100_000);
    const offer = await offerOn(account.id, { discount_percentage: 40, months_period: 3 });
    const body = { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxToday(api) };
    const past = await accept(offer.id, { ...body, instalment_amount: 19_999 });
    expect(past.response.status).toBe(422);
    expectFieldError(past.error, 'instalment_amount');
    expect((await read(offer.id)).status).toBe('pending');
    const fits = await accept(offer.id, { ...body, instalment_amount: 20_000 });
    expect(fits.response.status).toBe(200);
    const plan = (await api.GET('/payment-plans/{id}', { params: { path: { id: fits.data!.data.payment_plan_id! } } })).data!.data;
    expect(plan.charges.map((c) => c.amount)).toEqual([20_000, 20_000, 20_000]);
  });

  test('a plan that defaults (declined three times) breaks the offer: nothing written off, the rest owed again', async () => {
    const { account, methodId } = await accountWithCard(api, 30_000, {}, '4000000000000002');
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 2 });
    const { data } = await accept(offer.id, { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxToday(api) });
    expect(data!.data.status).toBe('accepted');
    await advanceSandbox(api, 1);
    await advanceSandbox(api, 3);
    expect((await read(offer.id)).status).toBe('accepted');
    await advanceSandbox(api, 3);
    expect(await read(offer.id)).toMatchObject({ status: 'broken' });
    expect((await api.GET('/payment-plans/{id}', { params: { path: { id: data!.data.payment_plan_id! } } })).data!.data.status).toBe('defaulted');
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 30_000, status: 'active' });
    expect((await transactions(account.id)).filter(([type]) => type === 'settlement_write_off')).toEqual([]);
    // The whole balance may be paid again.
    expect((await api.POST('/charges', { body: { amount: 30_000, debt_account_id: account.id, card: testCard() } })).response.status).toBe(201);
  });
});
