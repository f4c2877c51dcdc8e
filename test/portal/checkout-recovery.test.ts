/**
 * A Portal checkout whose gateway answer is lost (TEST_SANDBOX_LOSE_ANSWER_CENTS): the payment
 * is answered still `processing`, and the checkout's activity events wait for the outcome. When
 * charge-recovery finishes the charge from the gateway's own record, the events the checkout
 * would have recorded are recorded then — success for a card the gateway took, failed for one it
 * declined — once, however often recovery runs.
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, newSession, unique } from '../support/fixtures';
import { recoverCharges } from '../../server/payments/charge-recovery';

const LOST = 1313;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ testSandboxLoseAnswerCents: LOST });
});
afterAll(async () => app?.stop());

const card = (number: string) => ({ card_holder: 'Maria Gonzalez', card_number: number, card_expiration_month: 8, card_expiration_year: 39 });

/** A verified Portal visit of a new customer's account of $600.00, through the Portal API. */
async function visit() {
  const { customer, account } = await customerWithAccount(app.sandbox, { ssn_last4: '4417' }, { balance: 60000, external_account_number: unique('AN') });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, verification: false });
  const entered = await fetch(session.portal_url, { redirect: 'manual' });
  const cookie = entered.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
  const csrf = (await fetch(`${app.config.portalUrl}/api/session`, { headers: { cookie } })).headers.get('x-csrf-token')!;
  const pay = async (number: string, amount = LOST) => {
    const response = await fetch(`${app.config.portalUrl}/api/accounts/${account.id}/payments`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify({ amount, card: card(number), accept_policy: true }),
    });
    return { status: response.status, body: (await response.json()) as { data: { charge: { id: string; status: string }; current_balance: number } } };
  };
  return { account, pay };
}

const activityOf = (accountId: string) => app.db('portal_activity').where({ debt_account_id: accountId }).orderBy('occurred_at').pluck('event');

test('a checkout charge left processing and finished by recovery records the checkout events it would have, once', async () => {
  const taken = await visit();
  const declined = await visit();

  // Not yet answered: 202 (as POST /charges), the charge processing.
  const paid = await taken.pay('4242424242424242');
  expect(paid.status).toBe(202);
  expect(paid.body.data.charge.status).toBe('processing');
  expect(paid.body.data.current_balance).toBe(60000);
  const refused = await declined.pay('4000000000000002');
  expect(refused.status).toBe(202);
  expect(refused.body.data.charge.status).toBe('processing');
  // Nothing is told of a payment whose outcome nobody knows yet.
  expect(await activityOf(taken.account.id)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^customer\.checkout\./)]));
  expect(await activityOf(declined.account.id)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^customer\.checkout\./)]));

  expect(await recoverCharges(app.deps, 0)).toBe(2);
  expect(await recoverCharges(app.deps, 0)).toBe(0);

  const checkoutEvents = async (accountId: string) => (await activityOf(accountId)).filter((event) => event.startsWith('customer.checkout.')).sort();
  expect(await checkoutEvents(taken.account.id)).toEqual(['customer.checkout.one-time-payment.amount.success', 'customer.checkout.policy.accepted']);
  expect(await checkoutEvents(declined.account.id)).toEqual(['customer.checkout.one-time-payment.amount.failed', 'customer.checkout.policy.accepted']);
  // As the customer sees it afterwards: the payment went through, or was declined and moved nothing.
  const charges = await app.sandbox.GET('/charges', { params: { query: { debt_account_id: taken.account.id } } });
  expect(charges.data!.data.map((charge) => [charge.status, charge.amount])).toEqual([['succeeded', LOST]]);
  const balance = await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: taken.account.id } } });
  expect(balance.data!.data.current_balance).toBe(60000 - LOST);
  const failed = await app.sandbox.GET('/charges', { params: { query: { debt_account_id: declined.account.id } } });
  expect(failed.data!.data.map((charge) => [charge.status, charge.error_code])).toEqual([['failed', 'card_declined']]);
  // Told through the events port too, once each.
  const logged = await app.db('portal_activity').whereIn('debt_account_id', [taken.account.id, declined.account.id]).where('event', 'like', 'customer.checkout.%').count<{ n: string }[]>('* as n');
  expect(Number(logged[0]!.n)).toBe(4);
});

test('a checkout answered at once records its events with its answer, and recovery adds none', async () => {
  const { account, pay } = await visit();
  const paid = await pay('4242424242424242', 2500);
  expect(paid.status).toBe(201);
  expect(paid.body.data).toMatchObject({ charge: { status: 'succeeded' }, current_balance: 57500 });
  const checkoutEvents = async () => (await activityOf(account.id)).filter((event) => event.startsWith('customer.checkout.')).sort();
  expect(await checkoutEvents()).toEqual(['customer.checkout.one-time-payment.amount.success', 'customer.checkout.policy.accepted']);
  await recoverCharges(app.deps, 0);
  expect(await checkoutEvents()).toEqual(['customer.checkout.one-time-payment.amount.success', 'customer.checkout.policy.accepted']);
});
