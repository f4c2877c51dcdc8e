/**
 * External charges: money received outside the gateway lowers the balance with an `external`
 * transaction, pays an account off and completes its plan, is told encrypted in
 * external-charge.create, and a reversal gives the money back once.
 */
import type { Schemas } from '../../client';
import { decryptWebhookData, verifyWebhookSignature } from '../../client/webhooks';
import { accountOf, accountWithCard, balanceOf, customerWithAccount, expectFieldError, newDebtAccount, unique, UNKNOWN_UUID } from '../support/fixtures';
import { sandboxDayAfter, sandboxToday, advanceSandbox } from '../support/sandbox-clock';
import { dateOf } from '../support/dates';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually, payloadErrors, webhookTestKit } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
});
afterAll(async () => {
  await app?.stop();
});
const kit = webhookTestKit(() => app);

const today = () => dateOf(app.clock.now());
const cheque = (debt_account_id: string, amount: number, extra: Partial<Schemas['ExternalChargeCreate']> = {}): Schemas['ExternalChargeCreate'] => ({
  debt_account_id,
  amount,
  paid_at: today(),
  method: 'check',
  reference: 'CHK-004512',
  note: 'Mailed cheque, received at the Austin office.',
  ...extra,
});

const transactionsOf = async (api: TestApp['api'], accountId: string) =>
  (await api.GET('/transactions', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data;

describe('POST /external-charges', () => {
  test('in production with no payment gateway, a cheque lowers the balance with an `external` transaction', async () => {
    expect(app.config.paymentGateway).toBeUndefined();
    const { account } = await customerWithAccount(app.api, {}, { balance: 30_000 });
    const { data, response } = await app.api.POST('/external-charges', { body: cheque(account.id, 12_500) });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({ debt_account_id: account.id, amount: 12_500, paid_at: today(), method: 'check', reference: 'CHK-004512', status: 'recorded', reversed_at: null });
    expect(data!.data.transactions).toEqual([expect.objectContaining({ type: 'external', amount: 12_500, status: 'succeeded', charge_id: null, external_charge_id: data!.data.id })]);
    expect(await balanceOf(app.api, account.id)).toBe(17_500);
    expect((await transactionsOf(app.api, account.id)).map((t) => [t.type, t.amount])).toEqual([['external', 12_500]]);
    const read = await app.api.GET('/external-charges/{id}', { params: { path: { id: data!.data.id } } });
    expect(read.data!.data).toEqual(data!.data);
    const listed = await app.api.GET('/external-charges', { params: { query: { debt_account_id: account.external_id! } } });
    expect(listed.data!.data.map((c) => c.id)).toEqual([data!.data.id]);
  });

  test('the whole balance pays the account off, and its payment plan completes', async () => {
    const { account, methodId } = await accountWithCard(app.sandbox, 20_000);
    const plan = await app.sandbox.POST('/payment-plans', {
      body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: await sandboxDayAfter(app.sandbox, 3), amount: 5_000 },
    });
    expect(plan.response.status).toBe(201);
    const { response } = await app.sandbox.POST('/external-charges', { body: cheque(account.id, 20_000, { method: 'money_order', paid_at: await sandboxToday(app.sandbox) }) });
    expect(response.status).toBe(201);
    const after = await accountOf(app.sandbox, account.id);
    expect([after.current_balance, after.status]).toEqual([0, 'paid_off']);
    const planAfter = await app.sandbox.GET('/payment-plans/{id}', { params: { path: { id: plan.data!.data.id } } });
    expect(planAfter.data!.data.status).toBe('completed');
  });

  test("a parent's external charge pays its children oldest first", async () => {
    const { customer, account: parent } = await customerWithAccount(app.api, {}, { balance: 0 });
    const older = await newDebtAccount(app.api, customer.id, { external_id: unique('CHILD'), parent_external_id: parent.external_id!, balance: 4_000 });
    const younger = await newDebtAccount(app.api, customer.id, { external_id: unique('CHILD'), parent_external_id: parent.external_id!, balance: 6_000 });
    const { data } = await app.api.POST('/external-charges', { body: cheque(parent.id, 5_000, { method: 'cash', reference: null, note: null }) });
    expect(data!.data.transactions.map((t) => [t.debt_account_id, t.amount])).toEqual([
      [older.id, 4_000],
      [younger.id, 1_000],
    ]);
    expect([await balanceOf(app.api, older.id), await balanceOf(app.api, younger.id), await balanceOf(app.api, parent.id)]).toEqual([0, 5_000, 5_000]);
  });

  test('money received is recorded on an account that takes no payments (closed), but never above the balance', async () => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 10_000, status: 'closed', billing_type: ['payment-plan'] });
    const over = await app.api.POST('/external-charges', { body: cheque(account.id, 10_001) });
    expect(over.response.status).toBe(422);
    expectFieldError(over.error, 'amount');
    expect(await balanceOf(app.api, account.id)).toBe(10_000);
    const whole = await app.api.POST('/external-charges', { body: cheque(account.id, 10_000, { method: 'card_terminal' }) });
    expect(whole.response.status).toBe(201);
    expect(await balanceOf(app.api, account.id)).toBe(0);
    const more = await app.api.POST('/external-charges', { body: cheque(account.id, 1) });
    expectFieldError(more.error, 'amount');
  });

  test('`paid_at` may be today on the tenant\'s clock (the sandbox clock) but not the day after', async () => {
    await advanceSandbox(app.sandbox, 3);
    const { account } = await customerWithAccount(app.sandbox, {}, { balance: 10_000 });
    const sandboxDay = await sandboxToday(app.sandbox);
    expect(sandboxDay > today()).toBe(true);
    const tomorrow = await app.sandbox.POST('/external-charges', { body: cheque(account.id, 100, { paid_at: await sandboxDayAfter(app.sandbox, 1) }) });
    expect(tomorrow.response.status).toBe(422);
    expectFieldError(tomorrow.error, 'paid_at');
    const onTheDay = await app.sandbox.POST('/external-charges', { body: cheque(account.id, 100, { paid_at: sandboxDay }) });
    expect(onTheDay.response.status).toBe(201);
    // Production's clock has not moved: the sandbox's day is in its future.
    const { account: real } = await customerWithAccount(app.api, {}, { balance: 10_000 });
    expectFieldError((await app.api.POST('/external-charges', { body: cheque(real.id, 100, { paid_at: sandboxDay }) })).error, 'paid_at');
  });

  test.each([
    ['amount', { amount: 0 }],
    ['amount', { amount: 12.5 }],
    ['method', { method: 'bitcoin' }],
    ['paid_at', { paid_at: '2026-02-30' }],
    ['reference', { reference: 'x'.repeat(256) }],
    ['note', { note: 'x'.repeat(1001) }],
  ])('a bad %s is a 422 on it and records nothing', async (field, change) => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 10_000 });
    const { response, error } = await app.api.POST('/external-charges', { body: { ...cheque(account.id, 100), ...change } as Schemas['ExternalChargeCreate'] });
    expect(response.status).toBe(422);
    expectFieldError(error, field);
    expect(await balanceOf(app.api, account.id)).toBe(10_000);
  });

  test("another organization's account, or none, answers 404 and changes nothing", async () => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 10_000 });
    for (const id of [account.id, UNKNOWN_UUID]) {
      const { response, error } = await app.other.POST('/external-charges', { body: cheque(id, 100) });
      expect(response.status).toBe(404);
      expect(error).toEqual({ error: expect.any(String), errorCode: 'not_found' });
    }
    expect(await balanceOf(app.api, account.id)).toBe(10_000);
  });

  test('one Idempotency-Key records the cheque once', async () => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 10_000 });
    const key = unique('ext-key');
    const first = await app.api.POST('/external-charges', { body: cheque(account.id, 2_000), params: { header: { 'Idempotency-Key': key } } });
    const again = await app.api.POST('/external-charges', { body: cheque(account.id, 2_000), params: { header: { 'Idempotency-Key': key } } });
    expect(again.data!.data.id).toBe(first.data!.data.id);
    expect(await balanceOf(app.api, account.id)).toBe(8_000);
  });
});

describe('POST /external-charges/{id}/reverse', () => {
  test('a bounced cheque gives the balance back with an opposite transaction, once; a second reversal is 409', async () => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 7_500 });
    const { data } = await app.api.POST('/external-charges', { body: cheque(account.id, 7_500) });
    expect((await accountOf(app.api, account.id)).status).toBe('paid_off');
    const id = data!.data.id;
    const reversed = await app.api.POST('/external-charges/{id}/reverse', { params: { path: { id } }, body: { reason: 'Cheque returned unpaid (insufficient funds).' } });
    expect(reversed.response.status).toBe(200);
    expect(reversed.data!.data).toMatchObject({ status: 'reversed', reversal_reason: 'Cheque returned unpaid (insufficient funds).', reversed_at: expect.any(String) });
    expect(reversed.data!.data.transactions.map((t) => [t.type, t.amount])).toEqual([
      ['external', 7_500],
      ['external_reversal', -7_500],
    ]);
    const after = await accountOf(app.api, account.id);
    expect([after.current_balance, after.status]).toEqual([7_500, 'active']);

    const twice = await app.api.POST('/external-charges/{id}/reverse', { params: { path: { id } } });
    expect(twice.response.status).toBe(409);
    expect(twice.error).toEqual({ error: expect.any(String), errorCode: 'conflict' });
    expect(await balanceOf(app.api, account.id)).toBe(7_500);
  });

  test("another organization's external charge is 404 to read and to reverse", async () => {
    const { account } = await customerWithAccount(app.api, {}, { balance: 7_500 });
    const { data } = await app.api.POST('/external-charges', { body: cheque(account.id, 500) });
    const id = data!.data.id;
    expect((await app.other.GET('/external-charges/{id}', { params: { path: { id } } })).response.status).toBe(404);
    expect((await app.other.POST('/external-charges/{id}/reverse', { params: { path: { id } } })).response.status).toBe(404);
    expect((await app.sandbox.GET('/external-charges/{id}', { params: { path: { id } } })).response.status).toBe(404);
    expect(await balanceOf(app.api, account.id)).toBe(7_000);
  });
});

describe('external-charge.create', () => {
  test('is delivered signed and encrypted with the webhook secret, and decrypts to the external charge', async () => {
    const receiver = await kit.receiver();
    const secret = 'external_charge_secret_0123';
    const hook = await app.api.POST('/webhooks', { body: { url: receiver.url, events: ['external-charge.create', 'debt-account.update'], secret } });
    kit.last(() => app.api.DELETE('/webhooks/{id}', { params: { path: { id: hook.data!.data.id } } }));
    await kit.worker();
    const { account } = await customerWithAccount(app.api, {}, { balance: 9_000 });
    const { data } = await app.api.POST('/external-charges', { body: cheque(account.id, 4_000) });

    const hit = await eventually(() => receiver.received.find((r) => r.headers['x-service-event-name'] === 'external-charge.create'), 'external-charge.create');
    expect(payloadErrors('external-charge.create', hit.body)).toEqual([]);
    expect(typeof hit.body.data).toBe('string');
    expect(hit.raw.toString('utf8')).not.toContain(account.id);
    expect(verifyWebhookSignature(hit.raw.toString('utf8'), String(hit.headers['x-service-signature-256']), secret)).toBe(true);
    expect(decryptWebhookData(hit.body.data as string, secret)).toEqual(data!.data);
    expect(() => decryptWebhookData(hit.body.data as string, 'some_other_secret_0123456')).toThrow();

    const update = await eventually(
      () => receiver.received.find((r) => r.headers['x-service-event-name'] === 'debt-account.update' && (r.body.data as { id: string }).id === account.id),
      'debt-account.update',
    );
    expect(payloadErrors('debt-account.update', update.body)).toEqual([]);
    const shown = update.body.data as { current_balance: number; transactions: { type_id: number; amount_cents: number; gateway_name: string }[] };
    expect(shown.current_balance).toBe(5_000);
    expect(shown.transactions.map((t) => [t.gateway_name, t.amount_cents])).toEqual([['external', 4_000]]);
  });
});
