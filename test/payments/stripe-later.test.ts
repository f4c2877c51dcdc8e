/**
 * What Stripe settles later, through the API against the local Stripe server: a recovery round
 * in which one charge cannot be answered yet while another is, and a card payment left
 * `processing` by Stripe that its signed `payment_intent.payment_failed` event declines, once.
 */
import type { ApiClient } from '../../client';
import { accountOf, customerWithAccount, testCard } from '../support/fixtures';
import type { StripeServer } from '../support/stripe-server';
import type { TestApp } from '../support/test-app';
import { startStripeApp } from '../support/stripe-app';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';
import { recoverCharge, recoverCharges } from '../../server/payments/charge-recovery';
import { gatewayFor } from '../../server/gateway/gateways';
import type { Tenant } from '../../server/kernel/tenant';

const SECRET_KEY = 'sk_test_51AcmeLaterKey7wQp';
const WEBHOOK_SECRET = 'whsec_acmeLaterSecret3kLm';

let stripe: StripeServer;
let app: TestApp;
let api: ApiClient;
let webhookUrl: string;
let tenant: Tenant;

beforeAll(async () => {
  ({ stripe, app, api, tenant, webhookUrl } = await startStripeApp({ secretKey: SECRET_KEY, webhookSecret: WEBHOOK_SECRET }));
  await subscribeToEverything(api);
});
afterAll(async () => {
  await app?.stop();
  await stripe?.close();
});

const account = async (balance = 10_000) => (await customerWithAccount(api, {}, { balance })).account;
const charge = (body: Record<string, unknown>) => api.POST('/charges', { body: body as never });
const chargeOf = async (id: string) => (await api.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
const transactionsOf = async (accountId: string) => (await api.GET('/transactions', { params: { query: { debt_account_id: accountId } } })).data!.data.map((t) => [t.type, t.status, t.amount]);
const intentOf = (chargeId: string) => stripe.intents().find((each) => each.metadata.charge_id === chargeId)!;

test("one recovery round: a charge Stripe cannot answer for yet stays processing, and the other charge of the round is still recovered", async () => {
  const first = await account();
  const second = await account();
  // The confirm's answer lost after Stripe charged: its PaymentIntent's id is recorded, find() retrieves it.
  stripe.loseAnswer('confirm');
  const known = await charge({ amount: 1500, debt_account_id: second.id, card: testCard() });
  expect(known.response.status).toBe(202);
  // Both answers of the create lost: while its sends are still timing out it is too early to tell, find() is unanswered.
  stripe.loseAnswer('create', 2);
  const from = stripe.requests.length;
  const asked = charge({ amount: 900, debt_account_id: first.id, card: testCard() });
  const created = async () => stripe.requests.slice(from).find((each) => each.path === '/v1/payment_intents');
  while (!(await created())) await new Promise((done) => setTimeout(done, 20));
  const unknownId = (await created())!.idempotencyKey!;

  expect(await recoverCharges(app.deps, 0)).toBe(1);
  expect(await chargeOf(unknownId)).toMatchObject({ status: 'processing' });
  expect(await chargeOf(known.data!.data.id)).toMatchObject({ status: 'succeeded' });
  expect((await accountOf(api, second.id)).current_balance).toBe(8500);
  expect((await accountOf(api, first.id)).current_balance).toBe(10_000);
  expect((await asked).response.status).toBe(202);
  // Once Stripe can tell (the SDK's timeout passed on both sends), a later round finishes it: never created for good, released.
  for (let tries = 0; tries < 100 && !(await recoverCharge(app.deps, tenant, unknownId)); tries += 1) await new Promise((done) => setTimeout(done, 200));
  expect(await chargeOf(unknownId)).toMatchObject({ status: 'failed', error_code: 'processing_error' });
  expect((await accountOf(api, first.id)).current_balance).toBe(10_000);
});

test("a card payment Stripe left processing, then declined: its signed payment_intent.payment_failed fails the charge with the decline, releases it, and fires charge.failed once however often it comes", async () => {
  const acct = await account();
  stripe.holdCards(1);
  const { data, response } = await charge({ amount: 2500, debt_account_id: acct.id, card: testCard() });
  // Stripe has not finished it: the charge is processing, its money reserved.
  expect(response.status).toBe(202);
  const id = data!.data.id;
  expect(intentOf(id)).toMatchObject({ status: 'processing' });
  // Recovery asks and is told "still processing": it stays so.
  expect(await recoverCharge(app.deps, tenant, id)).toBe(false);
  expect((await chargeOf(id)).status).toBe('processing');

  const event = stripe.failCard(intentOf(id).id, 'insufficient_funds');
  for (let times = 0; times < 3; times += 1) expect(await stripe.deliver(webhookUrl, WEBHOOK_SECRET, event)).toBe(200);
  expect(await chargeOf(id)).toMatchObject({ status: 'failed', error_code: 'insufficient_funds', error: 'The card has insufficient funds.', return_code: null });
  expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  expect(await transactionsOf(acct.id)).toEqual([['charge', 'failed', 0]]);
  expect(await outboxEvents(app, 'charge.failed', id)).toHaveLength(1);
  expect(await outboxEvents(app, 'charge.succeeded', id)).toHaveLength(0);
  // Recovery afterwards finds it finished: nothing more.
  expect(await recoverCharge(app.deps, tenant, id)).toBe(false);
  expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
});

test("Stripe's outcome of a card payment that failed after all is a decline, not an ACH return", async () => {
  const acct = await account();
  stripe.holdCards(1);
  const { data } = await charge({ amount: 1200, debt_account_id: acct.id, card: testCard() });
  const reference = intentOf(data!.data.id).id;
  stripe.failCard(reference, 'expired_card');
  const gateway = (await gatewayFor(app.deps, tenant, 'stripe'))!;
  expect(await gateway.outcome(reference)).toEqual({ status: 'failed', code: 'expired_card', message: 'The card has expired.' });
});
