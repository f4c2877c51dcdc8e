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
  // Two refusals a client must tell apart: verify first, and a POST without the CSRF token.
  expect(await browser.call('GET', '/accounts')).toEqual({ status: 403, body: { error: 'Verify the customer first (POST /api/verification).', errorCode: 'forbidden' } });
  for (const headers of [{}, { 'x-csrf-token': 'not-this-sessions-token' }] as Record<string, string>[]) {
    const refused = await browser.call('POST', '/verification', { ssn_last4: '4417' }, headers);
    expect(refused).toEqual({ status: 403, body: { error: expect.stringContaining('X-CSRF-Token'), errorCode: 'csrf_token_invalid' } });
  }
  const wrong = await browser.call('POST', '/verification', { ssn_last4: '0000' }, csrf);
  expect(wrong.status).toBe(422);
  const right = await browser.call('POST', '/verification', { ssn_last4: '4417' }, csrf);
  expect(right.status).toBe(200);
  expect(right.body.data.customer.name).toBe('Maria Gonzalez');
  // Verified: nothing is required any more, on the answer and on the session read after it.
  expect(right.body.data.verification_required).toBe(false);
  expect((await browser.call('GET', '/session')).body.data.verification_required).toBe(false);

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

  const activity = await app.db('portal_activity').where({ debt_account_id: account.id }).pluck('event');
  expect(activity).toEqual(
    expect.arrayContaining([
      'customer.session.verification.failed',
      'customer.session.verification.success',
      'customer.checkout.one-time-payment.amount.success',
      'customer.checkout.one-time-payment.amount.failed',
      'customer.checkout.payment-plan.failed',
      'customer.checkout.payment-plan.success',
    ]),
  );

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

test('a plan the organization left for the customer to configure is completed from the Portal: customer.payment-plan.updated', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 30000, payment_plan: {} });
  const before = await app.sandbox.GET('/payment-plans', { params: { query: { debt_account_id: account.id } } });
  expect(before.data!.data[0]!.status).toBe('pending_configuration');
  const browser = await signIn((await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id })).portal_url);
  const today = app.clock.now().toISOString().slice(0, 10);
  const made = await browser.call('POST', `/accounts/${account.id}/payment-plan`, { frequency: 'monthly', start_date: today, amount: 10000, card: card('4242424242424242'), accept_policy: true }, { 'x-csrf-token': browser.csrf });
  expect(made.status).toBe(201);
  expect(made.body.data).toMatchObject({ id: before.data!.data[0]!.id, status: 'active', frequency: 'monthly' });
  const activity = await app.db('portal_activity').where({ debt_account_id: account.id }).pluck('event');
  expect(activity).toEqual(expect.arrayContaining(['customer.checkout.payment-plan.success', 'customer.checkout.payment-plan.custom.success', 'customer.payment-plan.updated']));
});

describe('a guest looking for an account', () => {
  async function guest(): Promise<{ cookie: string; csrf: string }> {
    const root = await fetch(`${app.config.portalUrl}/?organization=${app.organization.organization_id}&environment=sandbox`);
    expect(root.status).toBe(200);
    const cookie = root.headers.getSetCookie().find((line) => line.startsWith('portal_session='))!.split(';')[0]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await root.text())![1]!;
    return { cookie, csrf };
  }

  const find = (who: { cookie: string; csrf: string }, fields: Record<string, string>) =>
    fetch(`${app.config.portalUrl}/find`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: who.csrf, ...fields }).toString(),
    });

  test('gets one answer for no match and for wrong details, and five wrong tries for one person stop the sixth, even with the right details', async () => {
    const { customer } = await customerWithAccount(app.sandbox, { phone: '5125550188', ssn_last4: '4417' });
    const who = await guest();
    const noMatch = await find(who, { phone: '5125550199', ssn_last4: '4417' });
    const wrong = await find(who, { phone: '5125550188', ssn_last4: '1111' });
    expect([noMatch.status, wrong.status]).toEqual([422, 422]);
    const message = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
    expect(message(await noMatch.text())).toBe(message(await wrong.text()));
    for (let attempt = 2; attempt <= 5; attempt++) expect((await find(who, { phone: customer.phone!, ssn_last4: '1111' })).status).toBe(422);
    expect((await find(who, { phone: customer.phone!, ssn_last4: '4417' })).status).toBe(429);
  });

  test('without the form’s CSRF token, nothing is looked up (403)', async () => {
    const who = await guest();
    const response = await find({ ...who, csrf: 'not-the-token' }, { phone: '5125550188', ssn_last4: '4417' });
    expect(response.status).toBe(403);
  });
});

test('the plan banner: shown on the account page, and "No thanks" closes it for the visit', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
  const browser = await signIn((await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id })).portal_url);
  const page = () => fetch(`${app.config.portalUrl}/accounts/${account.id}`, { headers: { cookie: browser.cookie } }).then((r) => r.text());
  expect(await page()).toContain('Pay over time');
  const closed = await fetch(`${app.config.portalUrl}/accounts/${account.id}/plan-offer/close`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: browser.csrf }).toString(),
  });
  expect(closed.status).toBe(303);
  expect(await page()).not.toContain('Pay over time');
  const activity = await app.db('portal_activity').where({ debt_account_id: account.id }).pluck('event');
  expect(activity.filter((event: string) => event === 'customer.call-to-action.modal.displayed')).toHaveLength(1);
  expect(activity).toContain('customer.call-to-action.modal.closed');
});

test('a payment on a later day is scheduled: the balance waits, the card is saved, .scheduled.success', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
  const browser = await signIn((await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id })).portal_url);
  const later = new Date(app.clock.now().getTime() + 7 * 86_400_000).toISOString().slice(0, 10);
  const tooLate = new Date(app.clock.now().getTime() + 31 * 86_400_000).toISOString().slice(0, 10);
  const csrf = { 'x-csrf-token': browser.csrf };
  const refused = await browser.call('POST', `/accounts/${account.id}/payments`, { amount: 5000, scheduled_at: tooLate, card: card('4242424242424242'), accept_policy: true }, csrf);
  expect(refused.status).toBe(422);
  expect(Object.keys(refused.body.errors)).toEqual(['scheduled_at']);
  const paid = await browser.call('POST', `/accounts/${account.id}/payments`, { amount: 5000, scheduled_at: later, card: card('4242424242424242'), accept_policy: true }, csrf);
  expect(paid.status).toBe(201);
  expect(paid.body.data).toMatchObject({ current_balance: 30000, charge: { status: 'scheduled', amount: 5000 } });
  const methods = await app.sandbox.GET('/customers/{id}/payment-methods', { params: { path: { id: customer.id } } });
  expect(methods.data!.data).toHaveLength(1);
  expect(await app.db('portal_activity').where({ debt_account_id: account.id }).pluck('event')).toContain('customer.checkout.one-time-payment.amount.scheduled.success');
});
