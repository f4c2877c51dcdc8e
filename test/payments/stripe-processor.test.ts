/**
 * Real money through Stripe, as an agency sees it: a sandbox token configured for Stripe's test
 * mode (PUT /payment-processor) against a local server that speaks Stripe's API
 * (test/support/stripe-server.ts), reached through the official SDK by STRIPE_API_URL. Each
 * scenario asserts what the API answers and which requests Stripe received.
 */
import type { ApiClient } from '../../client';
import { accountOf, customerWithAccount, expectFieldError, newCustomer, newDebtAccount, testAch, testCard, unique, type ErrorBody } from '../support/fixtures';
import type { RecordedRequest, StripeServer } from '../support/stripe-server';
import { signedAuthorizeNetWebhook, startAuthorizeNetServer } from '../support/authorize-net-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { startStripeApp } from '../support/stripe-app';
import { advanceSandbox, sandboxToday } from '../support/sandbox-clock';
import { recoverCharge, recoverCharges } from '../../server/payments/charge-recovery';
import type { Tenant } from '../../server/kernel/tenant';

const SECRET_KEY = 'sk_test_51AcmeRecoveryKey4fQa';
const WEBHOOK_SECRET = 'whsec_acmeRecoverySecret9xTz';

let stripe: StripeServer;
let app: TestApp;
let api: ApiClient;
let webhookUrl: string;
let tenant: Tenant;

beforeAll(async () => {
  ({ stripe, app, api, tenant, webhookUrl } = await startStripeApp({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }));
});
afterAll(async () => {
  await app?.stop();
  await stripe?.close();
});

/** The requests Stripe received from `from` on, as `METHOD path` with their Idempotency-Key. */
const callsSince = (from: number) => stripe.requests.slice(from).map((each) => ({ call: `${each.method} ${each.path.replace(/(pi|pm|cus)_[A-Za-z0-9]+/g, '$1_*')}`, key: each.idempotencyKey }));
const lastOf = (path: RegExp, from = 0): RecordedRequest => stripe.requests.slice(from).filter((each) => path.test(each.path)).at(-1)!;

const account = (balance = 10_000) => customerWithAccount(api, {}, { balance });

async function savedMethod(customerId: string, body: Record<string, unknown>): Promise<string> {
  const { data, response, error } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customerId } }, body: body as never });
  if (response.status !== 201) throw new Error(JSON.stringify(error));
  return data!.data.id;
}

const charge = (body: Record<string, unknown>) => api.POST('/charges', { body: body as never });
const chargeOf = async (id: string) => (await api.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
const transactionsOf = async (accountId: string) => (await api.GET('/transactions', { params: { query: { debt_account_id: accountId } } })).data!.data.map((t) => [t.type, t.amount]);

/** Runs recovery for one charge until it is finished (the adapter waits out the SDK's timeout before it trusts a list). */
async function recovered(chargeId: string): Promise<void> {
  for (let tries = 0; tries < 100; tries += 1) {
    if (await recoverCharge(app.deps, tenant, chargeId)) return;
    if ((await chargeOf(chargeId)).status !== 'processing') return;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`charge ${chargeId} was not recovered`);
}

describe('GET and PUT /payment-processor', () => {
  test('the answer shows the processor, the last four of each credential, its rate and the URL to register; the secrets are sealed and never answered or logged', async () => {
    const { data } = await api.GET('/payment-processor');
    expect(data!.data).toMatchObject({ processor: 'stripe', credentials: { secret_key: '4fQa', webhook_secret: '9xTz' }, rate_limit_per_second: 25 });
    expect(data!.data.webhook_url).toBe(`${app.origin}/api/v1/processor-webhooks/${data!.data.id}`);
    expect(JSON.stringify(data)).not.toContain(SECRET_KEY);
    const row = await app.db('payment_processors').where({ id: data!.data.id }).first();
    expect(row.credentials_sealed).not.toContain(SECRET_KEY);
    expect(row.credentials_sealed).not.toContain(WEBHOOK_SECRET);
    expect(app.logs.join('')).not.toContain(SECRET_KEY);
    expect(app.logs.join('')).not.toContain(WEBHOOK_SECRET);
  });

  test('a live key on the sandbox is a 422 on credentials.secret_key; a key Stripe refuses is a 422 quoting Stripe; nothing changes', async () => {
    const live = await api.PUT('/payment-processor', { body: { processor: 'stripe', credentials: { secret_key: 'sk_live_51AcmeLiveKey0000', webhook_secret: WEBHOOK_SECRET } } });
    expect(live.response.status).toBe(422);
    expectFieldError(live.error, 'credentials.secret_key');
    const refused = await api.PUT('/payment-processor', { body: { processor: 'stripe', credentials: { secret_key: 'sk_test_51RevokedKey0000', webhook_secret: WEBHOOK_SECRET } } });
    expect(refused.response.status).toBe(422);
    expect((refused.error as ErrorBody).errors!.credentials![0]).toMatch(/^Stripe refused the credentials: Invalid API Key provided/);
    expect((await api.GET('/payment-processor')).data!.data.credentials).toEqual({ secret_key: '4fQa', webhook_secret: '9xTz' });
  });

  test('a missing or foreign credential is a 422 on it; a test key in production is a 422', async () => {
    expectFieldError((await api.PUT('/payment-processor', { body: { processor: 'stripe', credentials: { secret_key: SECRET_KEY } } })).error, 'credentials.webhook_secret');
    expectFieldError((await api.PUT('/payment-processor', { body: { processor: 'authorize_net', credentials: { api_login_id: '5KP3u95bQpv', transaction_key: '346HZ32z3fP4hTG2' } } })).error, 'credentials.signature_key');
    expectFieldError((await app.api.PUT('/payment-processor', { body: { processor: 'stripe', credentials: { secret_key: SECRET_KEY, webhook_secret: WEBHOOK_SECRET } } })).error, 'credentials.secret_key');
  });

  test('production with no processor answers processor null, and POST /charges 409 processor_not_configured saying how to configure one', async () => {
    expect((await app.api.GET('/payment-processor')).data!.data).toMatchObject({ processor: null, webhook_url: null });
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const acct = await newDebtAccount(app.api, customer.id, { external_id: unique('ACC'), balance: 10_000 });
    const { error, response } = await app.api.POST('/charges', { body: { amount: 1000, debt_account_id: acct.id, card: testCard() } });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ errorCode: 'processor_not_configured', error: expect.stringContaining('PUT /payment-processor') });
    expect((await accountOf(app.api, acct.id)).current_balance).toBe(10_000);
  });
});

describe('charges through Stripe', () => {
  test('a card charge: a PaymentMethod, a PaymentIntent created unconfirmed with our charge id as Idempotency-Key and metadata, then confirmed', async () => {
    const { account: acct } = await account();
    const from = stripe.requests.length;
    const { data, response } = await charge({ amount: 2500, debt_account_id: acct.id, card: testCard() });
    expect(response.status).toBe(201);
    const id = data!.data.id;
    expect(data!.data).toMatchObject({ status: 'succeeded', amount: 2500 });
    expect(callsSince(from)).toEqual([
      // The SDK's own key on a request without ours (it lets the SDK send it again safely).
      { call: 'POST /v1/payment_methods', key: expect.stringMatching(/^stripe-node-retry-/) },
      { call: 'POST /v1/payment_intents', key: id },
      { call: 'POST /v1/payment_intents/pi_*/confirm', key: `confirm-${id}` },
    ]);
    const created = lastOf(/^\/v1\/payment_intents$/, from);
    expect(created.params).toMatchObject({ amount: '2500', currency: 'usd', confirm: 'false', metadata: { charge_id: id } });
    // A payer present: not off-session.
    expect(lastOf(/confirm$/, from).params.off_session).toBeUndefined();
    expect((await accountOf(api, acct.id)).current_balance).toBe(7500);
  });

  test.each([
    ['4000000000000002', 'card_declined'],
    ['4000000000009995', 'insufficient_funds'],
    ['4000000000000069', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error'],
    ['4000000000009987', 'card_declined'],
    ['4100000000000019', 'card_declined'],
  ])("Stripe's test card %s is declined as %s: a 400, the failed charge stored, the balance unchanged", async (number, code) => {
    const { account: acct } = await account();
    const { error, response } = await charge({ amount: 2500, debt_account_id: acct.id, card: testCard(number) });
    expect(response.status).toBe(400);
    const body = error as ErrorBody & { charge_id: string };
    expect(body.errorCode).toBe(code);
    expect(await chargeOf(body.charge_id)).toMatchObject({ status: 'failed', error_code: code });
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  });

  test('an ACH charge: the bank account saved as a PaymentMethod of the Stripe Customer, a us_bank_account PaymentIntent confirmed with the mandate; pending, settled by Stripe\'s event', async () => {
    const { customer, account: acct } = await account();
    let from = stripe.requests.length;
    const methodId = await savedMethod(customer.id, { ach: testAch('000123456789') });
    expect(callsSince(from).map((each) => each.call)).toEqual(['POST /v1/payment_methods', 'POST /v1/customers', 'POST /v1/payment_methods/pm_*/attach']);
    from = stripe.requests.length;
    const { data, response } = await charge({ amount: 4000, debt_account_id: acct.id, payment_method_id: methodId });
    expect(response.status).toBe(201);
    const id = data!.data.id;
    expect(data!.data.status).toBe('pending');
    expect(callsSince(from)).toEqual([
      { call: 'POST /v1/payment_intents', key: id },
      { call: 'POST /v1/payment_intents/pi_*/confirm', key: `confirm-${id}` },
    ]);
    expect(lastOf(/^\/v1\/payment_intents$/, from).params).toMatchObject({ allowed_payment_method_types: { 0: 'us_bank_account' }, customer: expect.stringMatching(/^cus_/) });
    expect(lastOf(/confirm$/, from).params.mandate_data).toEqual({ customer_acceptance: { type: 'offline' } });
    expect((await accountOf(api, acct.id)).current_balance).toBe(6000);

    const reference = stripe.intents().find((each) => each.metadata.charge_id === id)!.id;
    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, stripe.settleAch(reference))).toBe(200);
    expect((await chargeOf(id)).status).toBe('succeeded');
    expect(await transactionsOf(acct.id)).toEqual(expect.arrayContaining([['charge', 4000], ['ach_settlement', 0]]));
  });

  test('an ACH return reported by Stripe goes through the return flow: returned R01, the balance given back', async () => {
    const { customer, account: acct } = await account();
    const methodId = await savedMethod(customer.id, { ach: testAch('000123456780') });
    const { data } = await charge({ amount: 3000, debt_account_id: acct.id, payment_method_id: methodId });
    const reference = stripe.intents().find((each) => each.metadata.charge_id === data!.data.id)!.id;
    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, stripe.failAch(reference, 'insufficient_funds'))).toBe(200);
    expect(await chargeOf(data!.data.id)).toMatchObject({ status: 'returned', return_code: 'R01' });
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
    expect(await transactionsOf(acct.id)).toEqual(expect.arrayContaining([['ach_return', -3000]]));
  });

  test('a saved card\'s instalment is charged off-session through the Customer; a refund is one Refund with our key', async () => {
    const { customer, account: acct } = await account(20_000);
    const methodId = await savedMethod(customer.id, { card: testCard() });
    const { data: plan, response } = await api.POST('/payment-plans', {
      body: { debt_account_id: acct.id, payment_method_id: methodId, frequency: 'weekly', start_date: await sandboxToday(api), amount: 5000 },
    });
    expect(response.status).toBe(201);
    let from = stripe.requests.length;
    await advanceSandbox(api, 1);
    const [instalment] = (await api.GET('/charges', { params: { query: { debt_account_id: acct.id } } })).data!.data;
    expect(instalment).toMatchObject({ status: 'succeeded', source: 'payment_plan', payment_plan_uuid: plan!.data.id });
    expect(callsSince(from)).toEqual([
      { call: 'POST /v1/payment_intents', key: instalment!.id },
      { call: 'POST /v1/payment_intents/pi_*/confirm', key: `confirm-${instalment!.id}` },
    ]);
    expect(lastOf(/^\/v1\/payment_intents$/, from).params.customer).toMatch(/^cus_/);
    expect(lastOf(/confirm$/, from).params.off_session).toBe('true');

    from = stripe.requests.length;
    const refunded = await api.POST('/charges/{id}/refund', { params: { path: { id: instalment!.id } }, body: { amount: 2000 } });
    expect(refunded.data!.data).toMatchObject({ status: 'partially_refunded', refunded_amount: 2000 });
    expect(callsSince(from)).toEqual([{ call: 'POST /v1/refunds', key: `refund:${instalment!.id}:0:2000` }]);
    expect(lastOf(/refunds/, from).params).toEqual({ payment_intent: expect.stringMatching(/^pi_/), amount: '2000' });
  });
});

describe('when Stripe misbehaves', () => {
  test('the answer of the confirm is lost after Stripe charged: 202 processing, recovery retrieves the PaymentIntent by id and records it once', async () => {
    const { account: acct } = await account();
    stripe.loseAnswer('confirm');
    const { data, response } = await charge({ amount: 1500, debt_account_id: acct.id, card: testCard() });
    expect(response.status).toBe(202);
    const id = data!.data.id;
    await recovered(id);
    expect(await recoverCharges(app.deps, 0)).toBe(0);
    expect(await chargeOf(id)).toMatchObject({ status: 'succeeded' });
    expect((await accountOf(api, acct.id)).current_balance).toBe(8500);
    expect((await transactionsOf(acct.id)).filter(([type]) => type === 'charge')).toEqual([['charge', 1500]]);
    expect(stripe.intents().filter((each) => each.metadata.charge_id === id)).toHaveLength(1);
  });

  test('the answer of the create is lost: sent again with the same key, Stripe answers it from its idempotency store, one PaymentIntent', async () => {
    const { account: acct } = await account();
    stripe.loseAnswer('create');
    const from = stripe.requests.length;
    const { data, response } = await charge({ amount: 1200, debt_account_id: acct.id, card: testCard() });
    expect(response.status).toBe(201);
    const creates = stripe.requests.slice(from).filter((each) => each.path === '/v1/payment_intents');
    expect(creates.map((each) => [each.idempotencyKey, each.replayed])).toEqual([
      [data!.data.id, false],
      [data!.data.id, true],
    ]);
    expect(stripe.intents().filter((each) => each.metadata.charge_id === data!.data.id)).toHaveLength(1);
  });

  test('both answers of the create are lost: once the SDK timeout has passed, recovery finds the PaymentIntent by listing for our id, cancels it unconfirmed, and releases the charge', async () => {
    const { account: acct } = await account();
    stripe.loseAnswer('create', 2);
    const { data, response } = await charge({ amount: 900, debt_account_id: acct.id, card: testCard() });
    expect(response.status).toBe(202);
    const id = data!.data.id;
    const from = stripe.requests.length;
    await recovered(id);
    expect(await chargeOf(id)).toMatchObject({ status: 'failed', error_code: 'processing_error' });
    const [intent] = stripe.intents().filter((each) => each.metadata.charge_id === id);
    expect(intent).toMatchObject({ status: 'canceled' });
    // Found by listing (not Search), then canceled; never confirmed.
    expect(callsSince(from).map((each) => each.call)).toEqual(expect.arrayContaining(['GET /v1/payment_intents', 'POST /v1/payment_intents/pi_*/cancel']));
    expect(stripe.requests.some((each) => each.path === `/v1/payment_intents/${intent!.id}/confirm`)).toBe(false);
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  });

  test('a 429 storm is waited out (Retry-After), never taken for a decline', async () => {
    const { account: acct } = await account();
    stripe.rateLimit(6);
    const from = stripe.requests.length;
    const { data, response } = await charge({ amount: 1000, debt_account_id: acct.id, card: testCard() });
    expect(response.status).toBe(201);
    expect(data!.data.status).toBe('succeeded');
    expect(stripe.requests.slice(from).filter((each) => each.status === 429)).toHaveLength(6);
  });

  test('Stripe down for a while: the charge stays processing, never failed by guess; once Stripe is back, recovery finds no PaymentIntent and releases it', async () => {
    const { customer, account: acct } = await account();
    const methodId = await savedMethod(customer.id, { card: testCard() });
    stripe.down();
    const { data, response } = await charge({ amount: 1000, debt_account_id: acct.id, payment_method_id: methodId });
    expect(response.status).toBe(202);
    const id = data!.data.id;
    expect(await recoverCharge(app.deps, tenant, id)).toBe(false);
    expect((await chargeOf(id)).status).toBe('processing');
    stripe.up();
    await recovered(id);
    expect(await chargeOf(id)).toMatchObject({ status: 'failed', error_code: 'processing_error' });
    expect(stripe.intents().filter((each) => each.metadata.charge_id === id)).toHaveLength(0);
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  });

  test('a PaymentIntent that succeeded after our request gave up is finished by Stripe\'s event, once, whoever records it', async () => {
    const { account: acct } = await account();
    stripe.loseAnswer('confirm');
    const { data } = await charge({ amount: 700, debt_account_id: acct.id, card: testCard() });
    const id = data!.data.id;
    const reference = stripe.intents().find((each) => each.metadata.charge_id === id)!.id;
    const event = stripe.succeededEvent(reference);
    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event)).toBe(200);
    expect(await chargeOf(id)).toMatchObject({ status: 'succeeded' });
    await recoverCharge(app.deps, tenant, id);
    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event)).toBe(200);
    expect((await accountOf(api, acct.id)).current_balance).toBe(9300);
    expect((await transactionsOf(acct.id)).filter(([type]) => type === 'charge')).toEqual([['charge', 700]]);
  });
});

describe("Stripe's webhooks", () => {
  async function paidCharge(amount = 5000) {
    const { account: acct } = await account();
    const { data } = await charge({ amount, debt_account_id: acct.id, card: testCard() });
    const reference = stripe.intents().find((each) => each.metadata.charge_id === data!.data.id)!.id;
    return { acct, id: data!.data.id, reference };
  }

  test('a chargeback delivered three times gives the balance back once, is listed on the charge; lost later, it is recorded', async () => {
    const { acct, id, reference } = await paidCharge();
    expect((await accountOf(api, acct.id)).current_balance).toBe(5000);
    const { dispute, event } = stripe.dispute(reference, 'fraudulent');
    for (let times = 0; times < 3; times += 1) expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event)).toBe(200);
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
    expect(await transactionsOf(acct.id)).toEqual(expect.arrayContaining([['chargeback', -5000]]));
    expect((await transactionsOf(acct.id)).filter(([type]) => type === 'chargeback')).toHaveLength(1);
    expect(await chargeOf(id)).toMatchObject({ status: 'returned', error_code: 'chargeback', chargebacks: [{ id: dispute.id, status: 'open', amount: 5000, reason: 'fraudulent', closed_at: null }] });
    // Money taken back can no longer be refunded.
    expect((await api.POST('/charges/{id}/refund', { params: { path: { id } }, body: {} })).response.status).toBe(409);

    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, stripe.closeDispute(dispute.id, 'lost'))).toBe(200);
    expect((await chargeOf(id)).chargebacks).toEqual([expect.objectContaining({ id: dispute.id, status: 'lost', closed_at: expect.any(String) })]);
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  });

  test('a chargeback won: the money is the agency\'s again, the charge succeeded', async () => {
    const { acct, id, reference } = await paidCharge(3000);
    const { dispute, event } = stripe.dispute(reference, 'product_not_received');
    await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event);
    expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
    await stripe.deliver(webhookUrl, WEBHOOK_SECRET, stripe.closeDispute(dispute.id, 'won'));
    expect((await accountOf(api, acct.id)).current_balance).toBe(7000);
    expect(await chargeOf(id)).toMatchObject({ status: 'succeeded', chargebacks: [expect.objectContaining({ status: 'won' })] });
    expect(await transactionsOf(acct.id)).toEqual(expect.arrayContaining([['chargeback', -3000], ['chargeback_reversal', 3000]]));
  });

  test('a bad or missing signature is a 400 and changes nothing; an unknown configuration is a 404', async () => {
    const { acct, reference } = await paidCharge();
    const { event } = stripe.dispute(reference);
    expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event, { signature: `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` })).toBe(400);
    expect(await stripe.deliver(webhookUrl, 'whsec_someoneElsesSecret', event)).toBe(400);
    const missing = await fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ errorCode: 'bad_request' });
    expect(await stripe.deliver(`${app.origin}/api/v1/processor-webhooks/00000000-0000-4000-8000-000000000000`, WEBHOOK_SECRET, event)).toBe(404);
    expect((await accountOf(api, acct.id)).current_balance).toBe(5000);
  });
});

describe('Authorize.net through the API, against a local server that speaks its JSON API', () => {
  test('credentials checked and saved; a card charge is one authCaptureTransaction with our invoice number and duplicate window; its signed webhook is taken once, a bad signature refused', async () => {
    const merchant = { apiLoginId: '5KP3u95bQpv', transactionKey: '346HZ32z3fP4hTG2' };
    const anet = await startAuthorizeNetServer(merchant);
    const other = await startTestApp({ authorizeNetApiUrl: anet.url.replace('/xml/v1/request.api', '') });
    try {
      const signature_key = 'A'.repeat(128);
      const refused = await other.sandbox.PUT('/payment-processor', { body: { processor: 'authorize_net', credentials: { api_login_id: merchant.apiLoginId, transaction_key: '0000000000000000', signature_key } } });
      expect((refused.error as ErrorBody).errors!.credentials![0]).toContain('User authentication failed');
      const saved = await other.sandbox.PUT('/payment-processor', { body: { processor: 'authorize_net', credentials: { api_login_id: merchant.apiLoginId, transaction_key: merchant.transactionKey, signature_key } } });
      expect(saved.data!.data).toMatchObject({ processor: 'authorize_net', credentials: { api_login_id: 'bQpv', transaction_key: 'hTG2', signature_key: 'AAAA' } });

      const customer = await newCustomer(other.sandbox, { external_id: unique('CUST') });
      const acct = await newDebtAccount(other.sandbox, customer.id, { external_id: unique('ACC'), balance: 5000 });
      const { data, response } = await other.sandbox.POST('/charges', { body: { amount: 1000, debt_account_id: acct.id, card: testCard() } });
      expect(response.status).toBe(201);
      expect(data!.data).toMatchObject({ status: 'succeeded', amount: 1000 });
      const charges = anet.sent('createTransactionRequest');
      expect(charges).toHaveLength(1);
      const invoice = data!.data.id.replace(/-/g, '').slice(0, 20);
      expect(charges[0]!.transactionRequest).toMatchObject({ transactionType: 'authCaptureTransaction', amount: '10.00', order: { invoiceNumber: invoice } });
      expect(charges[0]!.refId).toBe(invoice);
      expect(JSON.stringify(charges[0]!.transactionRequest.transactionSettings)).toContain('duplicateWindow');
      expect((await accountOf(other.sandbox, acct.id)).current_balance).toBe(4000);

      const url = saved.data!.data.webhook_url!.replace(/^https?:\/\/[^/]+/, other.origin);
      const notice = { notificationId: `n-${unique('anet')}`, eventType: 'net.authorize.payment.authcapture.created', eventDate: new Date().toISOString(), webhookId: 'w-1', payload: { responseCode: 1, authAmount: 10, invoiceNumber: invoice, entityName: 'transaction', id: anet.transactions[0]!.transId } };
      const signed = signedAuthorizeNetWebhook(notice, signature_key);
      for (let i = 0; i < 2; i++) {
        const taken = await fetch(url, { method: 'POST', headers: signed.headers, body: signed.rawBody });
        expect(taken.status).toBe(200);
      }
      const forged = await fetch(url, { method: 'POST', headers: { ...signed.headers, 'x-anet-signature': `sha512=${'0'.repeat(128)}` }, body: signed.rawBody });
      expect(forged.status).toBe(400);
      expect((await accountOf(other.sandbox, acct.id)).current_balance).toBe(4000);
    } finally {
      await other.stop();
      await anet.close();
    }
  });
});
