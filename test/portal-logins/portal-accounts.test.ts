/**
 * Portal accounts over HTTP: registering after the guest lookup's verification, the password
 * rules at their edges, the one-hour one-use links, sign-in and its lock (five wrong tries, 15
 * minutes, the same answer for an unknown e-mail), the reset link, the API's `portal_account`
 * and its removal, and one-step checkout. Events are read from the outbox and checked against
 * the document; e-mails from the communications log.
 */
import { loadConfig } from '../../server/kernel/config';
import { hashPassword, passwordMatches } from '../../server/portal-logins/passwords';
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, unique, uniquePhone } from '../support/fixtures';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';
import { latestLink, linksSent, organizationQuery, portalGuest, textOf } from './portal-guest';

jest.setTimeout(120_000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
}, 120_000);
afterAll(async () => app?.stop());

const PASSWORD = 'violet tractor sings';
const MINUTE = 60_000;

async function debtor() {
  const phone = uniquePhone('512');
  return customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', date_of_birth: '1984-03-12', phone, address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } },
    { balance: 50000, external_account_number: unique('AN') },
  );
}

/** A guest verified for registration (phone + SSN), on the e-mail and password form. */
async function verifiedGuest(made: Awaited<ReturnType<typeof debtor>>) {
  const guest = portalGuest(app);
  expect((await guest.get(`/register?${organizationQuery(app)}`)).status).toBe(200);
  const verified = await guest.post('/register/verify', { phone: made.customer.phone!, ssn_last4: '4417' });
  expect(verified).toMatchObject({ status: 303, location: '/portal/register/account' });
  await guest.get('/register/account');
  return guest;
}

async function registered(email = `${unique('maria')}@mail.debt-collection.example`) {
  const made = await debtor();
  const guest = await verifiedGuest(made);
  const created = await guest.post('/register/account', { email, password: PASSWORD });
  expect(created.status).toBe(201);
  return { made, guest, email };
}

const portalAccountOf = async (customerId: string) => (await app.sandbox.GET('/customers/{id}', { params: { path: { id: customerId } } })).data!.data.portal_account;

async function signInAs(email: string, password: string) {
  const guest = portalGuest(app);
  await guest.get(`/sign-in?${organizationQuery(app)}`);
  return { guest, answer: await guest.post('/sign-in', { email, password }) };
}

test("production hashes a password with scrypt at OWASP's cost (N=2^17, r=8, p=1); these tests' cheaper hashes still check", async () => {
  expect(loadConfig({}).passwordScryptLog2N).toBe(17);
  const stored = await hashPassword(PASSWORD, loadConfig({}).passwordScryptLog2N);
  expect(stored).toMatch(/^scrypt\$17\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
  expect(await passwordMatches(PASSWORD, stored)).toBe(true);
  expect(await passwordMatches(`${PASSWORD}!`, stored)).toBe(false);
  const cheap = await hashPassword(PASSWORD, app.config.passwordScryptLog2N);
  expect(cheap).toMatch(/^scrypt\$12\$8\$1\$/);
  expect(await passwordMatches(PASSWORD, cheap)).toBe(true);
});

describe('Create an account', () => {
  test('verification first (a wrong answer is the lookup\'s "no match"), then the password at its edges; one account per customer', async () => {
    const made = await debtor();
    const guest = portalGuest(app);
    await guest.get(`/register?${organizationQuery(app)}`);
    const wrong = await guest.post('/register/verify', { phone: made.customer.phone!, ssn_last4: '9999' });
    expect(wrong.status).toBe(422);
    expect(textOf(wrong.html)).toContain('We could not find an account with those details');
    // Without verification, the account form is not shown.
    expect((await guest.get('/register/account')).status).toBe(303);
    expect((await guest.post('/register/verify', { phone: made.customer.phone!, ssn_last4: '4417' })).status).toBe(303);

    const email = `${unique('edge')}@mail.debt-collection.example`;
    const short = await guest.post('/register/account', { email, password: 'a'.repeat(11) });
    expect(short.status).toBe(422);
    expect(textOf(short.html)).toContain('Use at least 12 characters.');
    const common = await guest.post('/register/account', { email, password: 'Password1234' });
    expect(common.status).toBe(422);
    expect(textOf(common.html)).toContain('This password is too common.');
    expect((await guest.post('/register/account', { email: 'not-an-address', password: PASSWORD })).status).toBe(422);
    expect(await portalAccountOf(made.customer.id)).toBeNull();

    const twelve = await guest.post('/register/account', { email: email.toUpperCase(), password: 'b7#kQ2!mZp9x' });
    expect(twelve.status).toBe(201);
    expect(textOf(twelve.html)).toContain(`We sent a link to ${email}`);
    expect(await portalAccountOf(made.customer.id)).toEqual({ email, confirmed_at: null, last_sign_in_at: null });
    const again = await guest.post('/register/account', { email: `other-${email}`, password: PASSWORD });
    expect(again.status).toBe(422);
    expect(textOf(again.html)).toContain('You already have a Portal account');

    expect((await outboxEvents(app, 'guest.registration.verification.failed', () => true)).length).toBeGreaterThan(0);
    const success = await outboxEvents(app, 'guest.registration.verification.success', (data) => data.trackables.customer?.uuid === made.customer.id);
    expect(success.length).toBe(1);
    expect(await outboxEvents(app, 'guest.registration.success', (data) => data.trackables.customer?.uuid === made.customer.id)).toHaveLength(1);
    expect((await outboxEvents(app, 'guest.registration.failed', (data) => data.trackables.customer?.uuid === made.customer.id)).length).toBe(4);
    // The password is in no log line.
    expect(app.logs.join('').includes(PASSWORD)).toBe(false);
    expect(app.logs.join('').includes('b7#kQ2!mZp9x')).toBe(false);
  });

  test('an address taken by another customer is refused on the e-mail field', async () => {
    const { email } = await registered();
    const guest = await verifiedGuest(await debtor());
    const taken = await guest.post('/register/account', { email, password: PASSWORD });
    expect(taken.status).toBe(422);
    expect(textOf(taken.html)).toContain('This e-mail address already has a Portal account');
  });
});

describe('the confirmation link and signing in', () => {
  test('before confirmation the right password signs nobody in; a newer link leaves the older one working; one confirms, the other then says so; then sign-in opens a browser session', async () => {
    const { made, email } = await registered();
    // The new link this sends is a second later than the first.
    app.clock.advance(1000);
    const before = await signInAs(email, PASSWORD);
    expect(before.answer.status).toBe(403);
    expect(textOf(before.answer.html)).toContain('Please confirm your e-mail first');

    const [newer, older] = await linksSent(app.sandbox, made.customer.id, email, /Confirm/);
    expect(older!.startsWith(`${app.origin}/portal/confirm-email?token=`)).toBe(true);
    // The first e-mail, never opened, still works although a newer one was sent.
    const confirmed = await portalGuest(app).get(older!);
    expect(confirmed.status).toBe(200);
    expect(textOf(confirmed.html)).toContain('Your e-mail is confirmed');
    for (const link of [older!, newer!]) {
      const again = await portalGuest(app).get(link);
      expect(again.status).toBe(200);
      expect(textOf(again.html)).toContain('Your e-mail is already confirmed');
      expect(again.html).toContain(`/portal/sign-in?${organizationQuery(app).replace('&', '&amp;')}`);
    }

    const { guest, answer } = await signInAs(email, PASSWORD);
    expect(answer).toMatchObject({ status: 303, location: '/portal/accounts' });
    const accounts = await guest.get('/accounts');
    expect(accounts.status).toBe(200);
    expect(textOf(accounts.html)).toContain(made.account.external_account_number!);
    // Signed in, the customer is no guest: a plan is offered, as to a link's customer (a found guest pays once).
    expect(textOf((await guest.get(`/accounts/${made.account.id}/checkout`)).html)).toContain('Set up a payment plan');
    const shown = await portalAccountOf(made.customer.id);
    expect(shown).toMatchObject({ email, last_sign_in_at: app.clock.now().toISOString() });
    expect(shown!.confirmed_at).not.toBeNull();
    expect(await outboxEvents(app, 'customer.login.success', (data) => data.trackables.customer?.uuid === made.customer.id)).toHaveLength(1);
  });

  test('GET /api/session answers a browser signed in with a password: its customer, verified, no customer session', async () => {
    const { made, email } = await registered();
    await portalGuest(app).get(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
    const { guest } = await signInAs(email, PASSWORD);
    const answer = await guest.get('/api/session');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-csrf-token')).toMatch(/.{20,}/);
    expect(JSON.parse(answer.html)).toEqual({
      data: {
        session_id: null,
        signed_in_with: 'portal_account',
        destination: 'accounts_list',
        verification_required: false,
        customer: { id: made.customer.id, external_id: made.customer.external_id, name: made.customer.name },
        debt_account: null,
        debt_account_dispute_id: null,
        return_url: null,
        expiration_return_url: null,
        valid_till: new Date(app.clock.now().getTime() + 30 * MINUTE).toISOString(),
      },
    });
    // The Portal API's reads work for it as for a link's browser.
    const accounts = await guest.get('/api/accounts');
    expect(accounts.status).toBe(200);
    expect(JSON.parse(accounts.html).data.map((account: { id: string }) => account.id)).toContain(made.account.id);
  });

  test('POST /sign-out needs the CSRF token (form field or X-CSRF-Token), then the browser session is gone', async () => {
    const { made, email } = await registered();
    await portalGuest(app).get(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
    const { guest } = await signInAs(email, PASSWORD);
    const cookie = [...guest.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const csrf = (await guest.get('/api/session')).headers.get('x-csrf-token')!;
    const forged = await fetch(`${app.origin}/portal/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(forged.status).toBe(403);
    expect((await guest.get('/api/session')).status).toBe(200);
    const out = await fetch(`${app.origin}/portal/sign-out`, { method: 'POST', redirect: 'manual', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
    expect(out.status).toBe(200);
    expect(textOf(await out.text())).toContain('You are signed out');
    expect((await fetch(`${app.origin}/portal/api/session`, { headers: { cookie } })).status).toBe(401);
  });

  test('a confirmation link works until its hour is over, not at the hour', async () => {
    const first = await registered();
    app.clock.advance(60 * MINUTE - 1000);
    expect((await portalGuest(app).get(await latestLink(app.sandbox, first.made.customer.id, first.email, /Confirm/))).status).toBe(200);
    const second = await registered();
    app.clock.advance(60 * MINUTE);
    const expired = await portalGuest(app).get(await latestLink(app.sandbox, second.made.customer.id, second.email, /Confirm/));
    expect(expired.status).toBe(410);
    expect(textOf(expired.html)).toContain('This link has expired');
    expect(textOf(expired.html)).toContain('we send you a new link');
  });
});

describe('the sign-in lock', () => {
  async function confirmedAccount() {
    const account = await registered();
    await portalGuest(app).get(await latestLink(app.sandbox, account.made.customer.id, account.email, /Confirm/));
    return account;
  }

  test('four wrong passwords answer as an unknown e-mail does; the fifth locks for 15 minutes, the right password included; at 15 minutes it opens', async () => {
    const { made, email } = await confirmedAccount();
    const unknown = await signInAs(`${unique('nobody')}@mail.debt-collection.example`, PASSWORD);
    for (let i = 1; i <= 4; i++) {
      const wrong = await signInAs(email, `wrong password ${i}`);
      expect(wrong.answer.status).toBe(401);
      expect(textOf(wrong.answer.html)).toBe(textOf(unknown.answer.html).replace(/nobody-[^"\s]+/g, email));
    }
    const fifth = await signInAs(email, 'wrong password 5');
    expect(fifth.answer.status).toBe(429);
    expect(textOf(fifth.answer.html)).toContain('locked after 5 wrong tries');
    // In the organization's zone (America/New_York by default) for every address, known or not: the owner's would tell.
    const until = new Date(app.clock.now().getTime() + 15 * MINUTE).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'America/New_York', timeZoneName: 'short' });
    expect(textOf(fifth.answer.html)).toContain(`Try again after ${until} (in 15 minutes)`);
    expect(textOf(fifth.answer.html)).not.toContain('UTC');
    expect(fifth.answer.headers.get('retry-after')).toBe('900');
    expect((await signInAs(email, PASSWORD)).answer.status).toBe(429);
    app.clock.advance(15 * MINUTE - 1000);
    expect((await signInAs(email, PASSWORD)).answer.status).toBe(429);
    app.clock.advance(1000);
    expect((await signInAs(email, PASSWORD)).answer.status).toBe(303);
    const failed = await outboxEvents(app, 'customer.login.failed', (data) => data.trackables.customer?.uuid === made.customer.id);
    expect(failed.length).toBe(7);
  });

  test('an unknown e-mail is locked after five tries too, so a lock tells nothing', async () => {
    const nobody = `${unique('ghost')}@mail.debt-collection.example`;
    for (let i = 1; i <= 4; i++) expect((await signInAs(nobody, PASSWORD)).answer.status).toBe(401);
    const fifth = await signInAs(nobody, PASSWORD);
    expect(fifth.answer.status).toBe(429);
    expect(textOf(fifth.answer.html)).toContain('locked after 5 wrong tries');
  });
});

describe('Forgot password', () => {
  test('answers the same for any e-mail; the link sets a new password once (12 characters at least), signs out the old sessions; reused or expired it says to ask again', async () => {
    const { made, email } = await registered();
    await portalGuest(app).get(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
    const signedIn = (await signInAs(email, PASSWORD)).guest;
    expect((await signedIn.get('/accounts')).status).toBe(200);

    const guest = portalGuest(app);
    await guest.get(`/forgot-password?${organizationQuery(app)}`);
    const asked = await guest.post('/forgot-password', { email });
    const unknown = await guest.post('/forgot-password', { email: `${unique('nobody')}@mail.debt-collection.example` });
    expect(asked.status).toBe(200);
    expect(textOf(asked.html)).toBe(textOf(unknown.html));

    const link = await latestLink(app.sandbox, made.customer.id, email, /Reset/);
    const form = portalGuest(app);
    expect((await form.get(link)).status).toBe(200);
    const token = new URL(link).searchParams.get('token')!;
    expect((await form.post('/reset-password', { token, password: 'x'.repeat(11) })).status).toBe(422);
    const changed = await form.post('/reset-password', { token, password: 'new shelf of lanterns' });
    expect(changed.status).toBe(200);
    expect(textOf(changed.html)).toContain('Your password is changed');
    // The browser signed in with the old password is signed out.
    expect((await signedIn.get('/accounts')).status).toBe(401);

    const reused = await portalGuest(app).get(link);
    expect(reused.status).toBe(410);
    expect(textOf(reused.html)).toContain('This link was already used');
    expect(reused.html).toContain(`/portal/forgot-password?${organizationQuery(app).replace('&', '&amp;')}`);
    expect((await signInAs(email, PASSWORD)).answer.status).toBe(401);
    expect((await signInAs(email, 'new shelf of lanterns')).answer.status).toBe(303);

    app.clock.advance(1000);
    await guest.post('/forgot-password', { email });
    const late = await latestLink(app.sandbox, made.customer.id, email, /Reset/);
    app.clock.advance(60 * MINUTE);
    const expired = await portalGuest(app).get(late);
    expect(expired.status).toBe(410);
    expect(textOf(expired.html)).toContain('This link has expired');
    expect(textOf(expired.html)).toContain('Send me a new link');
  });
});

describe('DELETE /customers/{id}/portal-account', () => {
  test('removes the account and its browser sessions; again, or for another tenant, it is 404', async () => {
    const { made, email } = await registered();
    await portalGuest(app).get(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
    const { guest } = await signInAs(email, PASSWORD);
    const other = await app.api.DELETE('/customers/{id}/portal-account', { params: { path: { id: made.customer.id } } });
    expect(other.response.status).toBe(404);
    const removed = await app.sandbox.DELETE('/customers/{id}/portal-account', { params: { path: { id: made.customer.id } } });
    expect(removed.response.status).toBe(200);
    expect(removed.data).toEqual({ success: true });
    expect(await portalAccountOf(made.customer.id)).toBeNull();
    expect((await guest.get('/accounts')).status).toBe(401);
    expect((await signInAs(email, PASSWORD)).answer.status).toBe(401);
    const again = await app.sandbox.DELETE('/customers/{id}/portal-account', { params: { path: { id: made.customer.id } } });
    expect(again.response.status).toBe(404);
    expect(again.error).toMatchObject({ errorCode: 'not_found' });
  });
});

describe('Pay with your account number', () => {
  test('the account number (or external_id) and one fact lead to that account\'s checkout; a wrong fact is "no match"', async () => {
    const made = await debtor();
    const guest = portalGuest(app);
    await guest.get(`/pay-by-account-number?${organizationQuery(app)}`);
    const missing = await guest.post('/pay-by-account-number', { account_number: made.account.external_account_number! });
    expect(missing.status).toBe(422);
    expect(textOf(missing.html)).toContain('Enter the last 4 of your SSN, your date of birth or your ZIP code.');
    const wrong = await guest.post('/pay-by-account-number', { account_number: made.account.external_account_number!, postal_code: '10001' });
    expect(wrong.status).toBe(422);
    expect(textOf(wrong.html)).toContain('We could not find an account with those details');
    const right = await guest.post('/pay-by-account-number', { account_number: made.account.external_account_number!, date_of_birth: '1984-03-12' });
    expect(right).toMatchObject({ status: 303, location: `/portal/accounts/${made.account.id}/checkout` });
    const checkout = await guest.get(right.location!);
    expect(checkout.status).toBe(200);
    expect(textOf(checkout.html)).not.toContain('Set up a payment plan');
    const byExternalId = portalGuest(app);
    await byExternalId.get(`/pay-by-account-number?${organizationQuery(app)}`);
    expect((await byExternalId.post('/pay-by-account-number', { account_number: made.account.external_id!, postal_code: '78704' })).status).toBe(303);

    expect((await outboxEvents(app, 'guest.customer.checkout.single-step.verification.failed', () => true)).length).toBeGreaterThan(0);
    const success = await outboxEvents(app, 'guest.customer.checkout.single-step.verification.success', (data) => data.trackables.debt_account?.uuid === made.account.id);
    expect(success).toHaveLength(2);
  });
});
