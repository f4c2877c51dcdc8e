/**
 * POST /charges and what follows, as an integrator sees it in the sandbox: every test card,
 * the amount rules at their edges, parents and children, paid_off and back, void and refund in
 * and out of state, two charges racing for one balance, tenancy, and the events.
 */
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../../client';
import { accountOf, accountWithCard, expectFieldError, newCustomer, newDebtAccount, unique, UNKNOWN_UUID, type ErrorBody, testCard } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
});
afterAll(async () => app?.stop());

const card = testCard;

const charge = (body: Record<string, unknown>, client: ApiClient = app.sandbox) => client.POST('/charges', { body: body as never });

describe('POST /charges with a card', () => {
  test.each(['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117'])(
    'card %s succeeds: 201, the balance drops, a transaction, charge.succeeded and debt-account.update',
    async (number) => {
      const { account: acct } = await accountWithCard(app.sandbox, 10000);
      const { data, response } = await charge({ amount: 2500, debt_account_id: acct.id, card: card(number) });
      expect(response.status).toBe(201);
      expect(data!.data).toMatchObject({ status: 'succeeded', amount: 2500, total_amount: 2500, debt_account_id: acct.id, payment_method_type: 'card', payment_method_id: null });
      expect(data!.data.card!.card_number).toBe(number.slice(-4));
      expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(7500);
      const txs = await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: acct.id } } });
      expect(txs.data!.data.map((t) => [t.type, t.status, t.amount, t.charge_id])).toEqual([['charge', 'succeeded', 2500, data!.data.id]]);
      const [succeeded] = await outboxEvents(app, 'charge.succeeded', (d) => d.id === data!.data.id);
      expect(succeeded).toMatchObject({ amount: 2500, success: true, payment_method_type: 'card' });
      const updates = await outboxEvents(app, 'debt-account.update', (d) => d.id === acct.id);
      expect(updates.at(-1)).toMatchObject({ current_balance: 7500 });
    },
  );

  test.each([
    ['4000000000000002', 'card_declined'],
    ['4000000000009995', 'insufficient_funds'],
    ['4000000000000069', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error'],
  ])('card %s is a 400 %s with the stored failed charge; the balance is unchanged', async (number, code) => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    const { error, response } = await charge({ amount: 2500, debt_account_id: acct.id, card: card(number) });
    expect(response.status).toBe(400);
    const body = error as ErrorBody & { charge_id: string };
    expect(body.errorCode).toBe(code);
    const stored = await app.sandbox.GET('/charges/{id}', { params: { path: { id: body.charge_id } } });
    expect(stored.data!.data).toMatchObject({ status: 'failed', error_code: code });
    expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(10000);
    const [failed] = await outboxEvents(app, 'charge.failed', (d) => d.id === body.charge_id);
    expect(failed).toMatchObject({ success: false, error_code: code });
  });

  test('a saved method is charged by id; save_payment_method saves an inline card', async () => {
    const { account: acct, methodId, customer } = await accountWithCard(app.sandbox, 10000);
    const saved = await charge({ amount: 1000, debt_account_id: acct.external_id, payment_method_id: methodId });
    expect(saved.data!.data).toMatchObject({ status: 'succeeded', payment_method_id: methodId });
    const [event] = await outboxEvents(app, 'charge.succeeded', (d) => d.id === saved.data!.data.id);
    expect(event).toMatchObject({ payment_method: { id: methodId, type: 'card' } });
    const inline = await charge({ amount: 1000, debt_account_id: acct.id, card: card('5555555555554444'), save_payment_method: true });
    expect(inline.data!.data.payment_method_id).toEqual(expect.any(String));
    const methods = await app.sandbox.GET('/customers/{id}/payment-methods', { params: { path: { id: customer.id } } });
    expect(methods.data!.data.map((m) => m.id)).toContain(inline.data!.data.payment_method_id);
  });
});

describe('POST /charges rules', () => {
  test('without a minimum rule: 99 is a 422, $1.00 is accepted; the balance is accepted and pays off; balance + 1 is a 422', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 5000);
    expectFieldError((await charge({ amount: 0, debt_account_id: acct.id, card: card() })).error, 'amount');
    expectFieldError((await charge({ amount: 99, debt_account_id: acct.id, card: card() })).error, 'amount');
    expect((await charge({ amount: 100, debt_account_id: acct.id, card: card() })).response.status).toBe(201);
    expectFieldError((await charge({ amount: 4901, debt_account_id: acct.id, card: card() })).error, 'amount');
    const all = await charge({ amount: 4900, debt_account_id: acct.id, card: card() });
    expect(all.response.status).toBe(201);
    expect(await accountOf(app.sandbox, acct.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    expectFieldError((await charge({ amount: 1, debt_account_id: acct.id, card: card() })).error, 'debt_account_id');
  });

  test('below the minimum payment is a 422 unless it pays the whole balance; at the minimum is accepted', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 6000, { rules: { min_payment_amount: 2500 } });
    expectFieldError((await charge({ amount: 2499, debt_account_id: acct.id, card: card() })).error, 'amount');
    expect((await charge({ amount: 2500, debt_account_id: acct.id, card: card() })).response.status).toBe(201);
    expect((await charge({ amount: 2499, debt_account_id: acct.id, card: card() })).response.status).toBe(422);
    expect((await charge({ amount: 3500, debt_account_id: acct.id, card: card() })).response.status).toBe(201);
  });

  test('exactly one way to pay; an unknown account; a method of another customer', async () => {
    const { account: acct, methodId } = await accountWithCard(app.sandbox);
    expectFieldError((await charge({ amount: 100, debt_account_id: acct.id })).error, 'payment_method_id');
    expectFieldError((await charge({ amount: 100, debt_account_id: acct.id, payment_method_id: methodId, card: card() })).error, 'card');
    expectFieldError((await charge({ amount: 100, debt_account_id: UNKNOWN_UUID, card: card() })).error, 'debt_account_id');
    const other = await accountWithCard(app.sandbox);
    expectFieldError((await charge({ amount: 100, debt_account_id: acct.id, payment_method_id: other.methodId })).error, 'payment_method_id');
    expectFieldError((await charge({ amount: 100, debt_account_id: acct.id, card: { ...card(), card_number: '4242424242424241' } })).error, 'card.card_number');
  });

  test('a card saved without a gateway token is a 422 asking for the card again', async () => {
    const { account: acct, methodId } = await accountWithCard(app.sandbox);
    await app.db('payment_methods').where({ id: methodId }).update({ gateway_token: null });
    const { error } = await charge({ amount: 100, debt_account_id: acct.id, payment_method_id: methodId });
    expectFieldError(error, 'payment_method_id');
    expect((error as ErrorBody).errors!.payment_method_id![0]).toMatch(/again/);
  });

  test('two charges at once that together exceed the balance: one succeeds, the other is a 422', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 5000);
    const answers = await Promise.all([3000, 3000].map((amount) => charge({ amount, debt_account_id: acct.id, card: card() })));
    expect(answers.map((a) => a.response.status).sort()).toEqual([201, 422]);
    expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(2000);
  });

  test('production without a payment processor answers 409 processor_not_configured and moves nothing', async () => {
    const customer = await newCustomer(app.api);
    const acct = await newDebtAccount(app.api, customer.id, { balance: 5000 });
    const { error, response } = await charge({ amount: 100, debt_account_id: acct.id, card: card() }, app.api);
    expect(response.status).toBe(409);
    expect((error as ErrorBody).errorCode).toBe('processor_not_configured');
    expect((await app.api.GET('/debt-accounts/{id}', { params: { path: { id: acct.id } } })).data!.data.current_balance).toBe(5000);
  });
});

describe('parents and children', () => {
  test('a charge on a parent is spread oldest child first; the parent is re-summed; a void gives each back', async () => {
    const customer = await newCustomer(app.sandbox);
    const parentId = unique('PARENT');
    const parent = await newDebtAccount(app.sandbox, customer.id, { balance: 0, external_id: parentId });
    const older = await newDebtAccount(app.sandbox, customer.id, { balance: 3000, parent_external_id: parentId });
    const younger = await newDebtAccount(app.sandbox, customer.id, { balance: 5000, parent_external_id: parentId });
    expect((await accountOf(app.sandbox, parent.id)).current_balance).toBe(8000);
    const made = await charge({ amount: 4000, debt_account_id: parent.id, card: card() });
    expect(made.response.status).toBe(201);
    expect([(await accountOf(app.sandbox, older.id)).current_balance, (await accountOf(app.sandbox, younger.id)).current_balance, (await accountOf(app.sandbox, parent.id)).current_balance]).toEqual([0, 4000, 4000]);
    expect((await accountOf(app.sandbox, older.id)).status).toBe('paid_off');
    const txs = await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: parent.id } } });
    expect(txs.data!.data.map((t) => [t.debt_account_id, t.amount]).sort()).toEqual([[older.id, 3000], [younger.id, 1000]].sort());
    const child = await charge({ amount: 500, debt_account_id: younger.id, card: card() });
    expect(child.response.status).toBe(201);
    expect((await accountOf(app.sandbox, parent.id)).current_balance).toBe(3500);
    const voided = await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: made.data!.data.id } } });
    expect(voided.data!.data.status).toBe('voided');
    expect([(await accountOf(app.sandbox, older.id)).current_balance, (await accountOf(app.sandbox, younger.id)).current_balance, (await accountOf(app.sandbox, parent.id)).current_balance]).toEqual([3000, 4500, 7500]);
    expect((await accountOf(app.sandbox, older.id)).status).toBe('active');
  });
});

describe('void and refund', () => {
  test('void: today a card charge is voided and the balance given back (active again); twice is a 409; the next day a 409', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 3000);
    const made = (await charge({ amount: 3000, debt_account_id: acct.id, card: card() })).data!.data;
    expect((await accountOf(app.sandbox, acct.id)).status).toBe('paid_off');
    const voided = await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: made.id } } });
    expect(voided.response.status).toBe(200);
    expect(await accountOf(app.sandbox, acct.id)).toMatchObject({ current_balance: 3000, status: 'active' });
    expect((await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: made.id } } })).response.status).toBe(409);
    expect((await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: made.id } }, body: {} })).response.status).toBe(409);
    const [voidEvent] = await outboxEvents(app, 'void.succeeded', (d) => d.id === made.id);
    expect(voidEvent).toMatchObject({ status: 'voided' });
    const later = (await charge({ amount: 1000, debt_account_id: acct.id, card: card() })).data!.data;
    app.clock.advance(86_400_000);
    try {
      expect((await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: later.id } } })).response.status).toBe(409);
    } finally {
      app.clock.advance(-86_400_000);
    }
  });

  test('refund: partial, then the rest by default; above what is left is a 422; a failed charge is a 409', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    const made = (await charge({ amount: 4000, debt_account_id: acct.id, card: card() })).data!.data;
    const part = await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: made.id } }, body: { amount: 1500 } });
    expect(part.data!.data).toMatchObject({ status: 'partially_refunded', refunded_amount: 1500 });
    expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(7500);
    expectFieldError((await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: made.id } }, body: { amount: 2501 } })).error, 'amount');
    const rest = await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: made.id } } });
    expect(rest.data!.data).toMatchObject({ status: 'refunded', refunded_amount: 4000 });
    expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(10000);
    expect((await outboxEvents(app, 'refund.succeeded', (d) => d.id === made.id)).length).toBe(2);
    const declined = (await charge({ amount: 100, debt_account_id: acct.id, card: card('4000000000000002') })).error as { charge_id: string };
    expect((await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: declined.charge_id } } })).response.status).toBe(409);
  });
});

describe('reads and tenancy', () => {
  test('GET /charges filters by account, customer and status, newest first; another tenant sees 404s', async () => {
    const { account: acct, customer } = await accountWithCard(app.sandbox, 10000);
    const first = (await charge({ amount: 100, debt_account_id: acct.id, card: card() })).data!.data;
    const second = (await charge({ amount: 200, debt_account_id: acct.id, card: card() })).data!.data;
    await charge({ amount: 300, debt_account_id: acct.id, card: card('4000000000000002') });
    const list = await app.sandbox.GET('/charges', { params: { query: { debt_account_id: acct.external_id!, status: 'succeeded' } } });
    expect(list.data!.data.map((c) => c.id)).toEqual([second.id, first.id]);
    const byCustomer = await app.sandbox.GET('/charges', { params: { query: { customer_id: customer.id } } });
    expect(byCustomer.data!.meta.total).toBe(3);
    expect((await app.api.GET('/charges/{id}', { params: { path: { id: first.id } } })).response.status).toBe(404);
    expect((await app.other.POST('/charges/{id}/void', { params: { path: { id: first.id } } })).response.status).toBe(404);
    const tx = (await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: acct.id } } })).data!.data[0]!;
    expect((await app.sandbox.GET('/transactions/{id}', { params: { path: { id: tx.id } } })).data!.data).toEqual(tx);
    expect((await app.api.GET('/transactions/{id}', { params: { path: { id: tx.id } } })).response.status).toBe(404);
  });

  test('transactions by date: today holds them, yesterday none; date_range with start_date is a 422', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    await charge({ amount: 100, debt_account_id: acct.id, card: card() });
    const today = await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: acct.id, date_range: 'today' } } });
    expect(today.data!.data).toHaveLength(1);
    const yesterday = await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: acct.id, date_range: 'yesterday' } } });
    expect(yesterday.data!.data).toHaveLength(0);
    const day = new Date().toISOString().slice(0, 10);
    const span = await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: acct.id, start_date: day, end_date: day } } });
    expect(span.data!.data).toHaveLength(1);
    expectFieldError((await app.sandbox.GET('/transactions', { params: { query: { date_range: 'today', start_date: day } } })).error, 'date_range');
  });

  test('with an Idempotency-Key a retried charge charges once', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    const key = randomUUID();
    const body = { amount: 700, debt_account_id: acct.id, card: card() };
    const first = await app.sandbox.POST('/charges', { body, headers: { 'Idempotency-Key': key } });
    const again = await app.sandbox.POST('/charges', { body, headers: { 'Idempotency-Key': key } });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data!.data.id).toBe(first.data!.data.id);
    expect((await accountOf(app.sandbox, acct.id)).current_balance).toBe(9300);
  });

  test('no card number or security code in any row of the payment tables or in the logs', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    await charge({ amount: 100, debt_account_id: acct.id, card: card('4000000000009995') });
    const tables = ['charges', 'transactions', 'charge_allocations', 'payment_methods', 'sandbox_vault', 'sandbox_payments', 'webhook_events', 'idempotency_keys'];
    const text = JSON.stringify(await Promise.all(tables.map((table) => app.db(table).select())));
    for (const secret of ['4000000000009995', '4242424242424242', '"9731"']) expect(text).not.toContain(secret);
    expect(app.logs.join('')).not.toContain('4000000000009995');
  });
});

describe('on the debt account', () => {
  test('a read embeds its latest 10 charges and transactions, newest first', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 100000);
    const made = [];
    for (let i = 1; i <= 11; i++) made.push((await charge({ amount: 100 * i, debt_account_id: acct.id, card: card() })).data!.data);
    await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: made[10]!.id } }, body: { amount: 50 } });
    const read = await accountOf(app.sandbox, acct.id);
    expect(read.charges).toHaveLength(10);
    expect(read.charges[0]).toMatchObject({ id: made[10]!.id, status: 'partially_refunded', refunded_amount: 50 });
    expect(read.charges.map((c) => c.id)).toEqual(made.slice(1).reverse().map((c) => c.id));
    expect(read.transactions).toHaveLength(10);
    expect(read.transactions[0]).toMatchObject({ type: 'refund', amount: -50, charge_id: made[10]!.id });
    expect(read.current_balance).toBe(100000 - 6600 + 50);
  });

  test('send_email: a receipt to the customer is queued with the charge', async () => {
    const { account: acct } = await accountWithCard(app.sandbox, 10000);
    const made = (await charge({ amount: 1234, debt_account_id: acct.id, card: card(), send_email: true, email: 'receipts@mail.debt-collection.example' })).data!.data;
    expect(made.email).toBe('receipts@mail.debt-collection.example');
    // Written to the communications log with the charge, and queued for the mail job by its row.
    const { data: log } = await app.sandbox.GET('/communications', { params: { query: { debt_account_id: acct.id, kind: 'receipt' } } });
    expect(log!.data).toHaveLength(1);
    const receipt = log!.data[0]!;
    expect(receipt).toMatchObject({ to: 'receipts@mail.debt-collection.example', subject: `Payment receipt ${made.reference_number}`, status: 'queued' });
    expect(receipt.text).toContain('$12.34');
    expect(receipt.text).toContain('ending 4242');
    const { rows } = await app.db.raw(`SELECT data FROM pgboss.job WHERE name = 'email' AND data->>'communicationId' = ?`, [receipt.id]);
    expect(rows).toHaveLength(1);
  });
});
