/**
 * "Forgot password" is limited: 3 reset e-mails per address typed in an hour, 20 requests per
 * IP address in an hour, counted in PostgreSQL (portal_reset_limits). Over a limit nothing is
 * sent and the page is the one every address gets; an hour on (the tenant's clock) it sends
 * again. A file of its own: its own database, so this IP's count starts at zero here (every
 * request of a test comes from the loopback address).
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, unique, uniquePhone } from '../support/fixtures';
import { latestLink, organizationQuery, portalGuest, textOf } from './portal-guest';

jest.setTimeout(120_000);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
}, 120_000);
afterAll(async () => app?.stop());

const PASSWORD = 'violet tractor sings';

/** A customer with a confirmed Portal account: its customer id and e-mail. */
async function confirmedAccount() {
  const made = await customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', date_of_birth: '1984-03-12', phone: uniquePhone('512'), address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } },
    { balance: 50000, external_account_number: unique('AN') },
  );
  const email = `${unique('reset')}@mail.debt-collection.example`;
  const guest = portalGuest(app);
  await guest.get(`/register?${organizationQuery(app)}`);
  expect((await guest.post('/register/verify', { phone: made.customer.phone!, ssn_last4: '4417' })).status).toBe(303);
  await guest.get('/register/account');
  expect((await guest.post('/register/account', { email, password: PASSWORD })).status).toBe(201);
  await portalGuest(app).get(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
  return { customerId: made.customer.id, email };
}

/** The reset e-mails the communications log holds for this customer and address. */
async function resetMails(customerId: string, to: string): Promise<number> {
  const { data } = await app.sandbox.GET('/communications', { params: { query: { customer_id: customerId, kind: 'account_security', limit: 100 } } });
  return data!.data.filter((mail) => mail.to === to && /Reset/.test(mail.subject)).length;
}

test('three reset e-mails per address an hour, then twenty requests per IP: past either, nothing is sent and the page is the same', async () => {
  const first = await confirmedAccount();
  const second = await confirmedAccount();
  const guest = portalGuest(app);
  await guest.get(`/forgot-password?${organizationQuery(app)}`);
  const neutral = textOf((await guest.post('/forgot-password', { email: `${unique('nobody')}@mail.debt-collection.example` })).html);
  expect(neutral).toContain('Check your e-mail');

  // Per address: the fourth request in the hour sends nothing, and says what the others said.
  for (let i = 1; i <= 4; i++) {
    app.clock.advance(1000);
    const asked = await guest.post('/forgot-password', { email: i % 2 === 0 ? first.email.toUpperCase() : first.email });
    expect(asked.status).toBe(200);
    expect(textOf(asked.html)).toBe(neutral);
  }
  expect(await resetMails(first.customerId, first.email)).toBe(3);
  // Another address is not held by the first one's count.
  const other = await guest.post('/forgot-password', { email: second.email });
  expect(textOf(other.html)).toBe(neutral);
  expect(await resetMails(second.customerId, second.email)).toBe(1);

  // Per IP: 6 requests so far; 14 more make 20, then the 21st sends nothing even to a fresh address.
  for (let i = 0; i < 14; i++) await guest.post('/forgot-password', { email: `${unique('probe')}@mail.debt-collection.example` });
  app.clock.advance(1000);
  const held = await guest.post('/forgot-password', { email: second.email });
  expect(held.status).toBe(200);
  expect(textOf(held.html)).toBe(neutral);
  expect(await resetMails(second.customerId, second.email)).toBe(1);
  // The counts are in PostgreSQL, where every server process reads them, under digests only.
  const rows = (await app.db('portal_reset_limits').select('subject', 'requests')) as { subject: string; requests: number }[];
  expect(rows.map((row) => row.subject.split(':')[0]).sort()).toContain('ip');
  expect(rows.some((row) => row.subject.includes(first.email) || row.subject.includes('127.0.0.1'))).toBe(false);
  expect(rows.find((row) => row.subject.startsWith('ip:'))!.requests).toBe(21);

  // An hour after the first request both counts start again: the address held above gets its link.
  app.clock.advance(60 * 60_000);
  // (The guest's visit ended after its quiet half hour: a new one.)
  const later = portalGuest(app);
  await later.get(`/forgot-password?${organizationQuery(app)}`);
  expect(textOf((await later.post('/forgot-password', { email: first.email })).html)).toBe(neutral);
  expect(await resetMails(first.customerId, first.email)).toBe(4);
  expect(textOf((await later.post('/forgot-password', { email: second.email })).html)).toBe(neutral);
  expect(await resetMails(second.customerId, second.email)).toBe(2);
  // The hour that is over was pruned: one row per subject seen since.
  expect(Number((await app.db('portal_reset_limits').count('* as n').first())!.n)).toBe(3);
});
