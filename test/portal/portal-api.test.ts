/**
 * The Portal API, as a frontend team's own pages call it: the browser session's cookie from
 * opening portal_url, the CSRF token from GET /api/session, then the same services as the
 * Portal's pages. The server's validator checks every answer against the document.
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, newSession, unique } from '../support/fixtures';
import { schemaErrors } from '../support/document';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

interface Browser {
  cookie: string;
  csrf: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, any> }>;
}

async function signIn(portalUrl: string): Promise<Browser> {
  const entered = await fetch(portalUrl, { redirect: 'manual' });
  expect(entered.status).toBe(303);
  const cookie = entered.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
  const call: Browser['call'] = async (method, path, body, headers = {}) => {
    const response = await fetch(`${app.config.portalUrl}/api${path}`, {
      method,
      headers: { cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const session = await fetch(`${app.config.portalUrl}/api/session`, { headers: { cookie } });
  expect(session.status).toBe(200);
  return { cookie, csrf: session.headers.get('x-csrf-token')!, call };
}

const card = (number: string) => ({ card_holder: 'Maria Gonzalez', card_number: number, card_expiration_month: 8, card_expiration_year: 39 });

test('verify, read, pay part with 4242… and set up a plan, all with the cookie and the CSRF token', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, { ssn_last4: '4417' }, { balance: 60000, external_account_number: unique('AN') });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, verification: true });
  const browser = await signIn(session.portal_url);
  const csrf = { 'x-csrf-token': browser.csrf };

  expect((await browser.call('GET', '/session')).body.data).toMatchObject({ verification_required: true, customer: { name: null } });
  expect((await browser.call('GET', '/accounts')).status).toBe(403);
  expect((await browser.call('POST', '/verification', { ssn_last4: '4417' })).status).toBe(403);
  const wrong = await browser.call('POST', '/verification', { ssn_last4: '0000' }, csrf);
  expect(wrong.status).toBe(422);
  const right = await browser.call('POST', '/verification', { ssn_last4: '4417' }, csrf);
  expect(right.status).toBe(200);
  expect(right.body.data.customer.name).toBe('Maria Gonzalez');

  const list = await browser.call('GET', '/accounts');
  expect(list.body.data).toEqual([expect.objectContaining({ id: account.id, current_balance: 60000, payable: true })]);

  const paid = await browser.call('POST', `/accounts/${account.id}/payments`, { amount: 5000, card: card('4242424242424242'), accept_policy: true }, csrf);
  expect(paid.status).toBe(201);
  expect(paid.body.data).toMatchObject({ current_balance: 55000, charge: { amount: 5000, status: 'succeeded', card: { card_number: '4242' } } });

  const declined = await browser.call('POST', `/accounts/${account.id}/payments`, { amount: 5000, card: card('4000000000000002'), accept_policy: true }, csrf);
  expect(declined.status).toBe(400);
  expect(declined.body.errorCode).toBe('card_declined');
  expect(schemaErrors('#/components/schemas/Error', declined.body)).toEqual([]);

  const today = app.clock.now().toISOString().slice(0, 10);
  const plan = await browser.call('POST', `/accounts/${account.id}/payment-plan`, { frequency: 'monthly', start_date: today, amount: 500, card: card('4242424242424242'), accept_policy: true }, csrf);
  expect(plan.status).toBe(422);
  expect(Object.keys(plan.body.errors)).toContain('amount');
  const made = await browser.call('POST', `/accounts/${account.id}/payment-plan`, { frequency: 'weekly', start_date: today, amount: 11000, card: card('4242424242424242'), accept_policy: true }, csrf);
  expect(made.status).toBe(201);
  expect(made.body.data).toMatchObject({ frequency: 'weekly', amount: 11000, status: 'active' });
  expect(made.body.data.charges).toHaveLength(5);

  const detail = await browser.call('GET', `/accounts/${account.id}`);
  expect(detail.body.data).toMatchObject({ current_balance: 55000, payment_plan: { id: made.body.data.id } });
  expect(detail.body.data.charges.map((charge: { status: string }) => charge.status)).toEqual(['failed', 'succeeded']);
});

test('without the cookie: 401; another customer’s account: 404', async () => {
  const first = await customerWithAccount(app.sandbox);
  const second = await customerWithAccount(app.sandbox);
  const response = await fetch(`${app.config.portalUrl}/api/accounts`);
  expect(response.status).toBe(401);
  expect(await response.json()).toMatchObject({ errorCode: 'unauthenticated' });
  const browser = await signIn((await newSession(app.sandbox, { customer_id: first.customer.id })).portal_url);
  expect((await browser.call('GET', `/accounts/${second.account.id}`)).status).toBe(404);
  const csrf = { 'x-csrf-token': browser.csrf };
  expect((await browser.call('POST', `/accounts/${second.account.id}/payments`, { amount: 100, card: card('4242424242424242'), accept_policy: true }, csrf)).status).toBe(404);
  expect((await browser.call('POST', `/accounts/${first.account.id}/payments`, { amount: 100, card: card('4242424242424242'), accept_policy: false }, csrf)).status).toBe(422);
});
