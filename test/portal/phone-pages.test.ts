/**
 * Every page the Portal renders, as a debtor's phone shows it (375 px, Chromium): none wider
 * than the screen, no field under 16 px or narrower than the others, radios beside their
 * labels, a link in every page (test/support/phone-pages.ts). The pages are read from the
 * Portal's router: one with no place here fails the last test. On the way, the debtor of a
 * Portal account (e-mail and password, never a link) sets up autopay, accepts a settlement as a
 * 6-month plan, signs out and back in; and a dispute holding a 300-character word stays 375 px.
 * One browser and one page for the file; each visitor starts with no cookies.
 */
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { Schemas } from '../../client';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import { phoneProblems, portalGetPaths } from '../support/phone-pages';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, newDebtAccount, newSession, testCard, unique, uniquePhone, UNKNOWN_UUID } from '../support/fixtures';
import { latestLink, organizationQuery } from '../portal-logins/portal-guest';

jest.setTimeout(600_000);

const SHOTS = '/work/briefs/shots';
const PASSWORD = 'violet tractor sings';
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');

/** What is served by GET but is no page: each with why. */
const NOT_PAGES: Record<string, string> = {
  '/assets/portal.css': 'the stylesheet',
  '/s/:token/accounts': "a link's entry: sets the cookie and redirects to /accounts",
  '/s/:token/accounts/:accountId': "a link's entry, redirecting to its page",
  '/s/:token/accounts/:accountId/checkout': "a link's entry, redirecting to its page",
  '/s/:token/accounts/:accountId/documents': "a link's entry, redirecting to its page",
  '/s/:token/disputes/:disputeId': "a link's entry, redirecting to its page",
  '/accounts/:accountId/plan-offer': "the plan banner's button: redirects to /plan",
  '/dispute-a-debt/form': 'redirects to the choice of account',
  '/accounts/:accountId/documents/:documentId/file': 'a PDF',
  '/disputes/:disputeId/files/:fileId': 'a file, downloaded',
  '/tickets/:ticketId/messages/:messageId/attachment': 'a file, downloaded',
};

let portal: PortalInChromium;
let app: TestApp;
let page: Page;
const checked = new Set<string>();

beforeAll(async () => {
  ({ app } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }, { subscribe: false }));
  mkdirSync(SHOTS, { recursive: true });
}, 180_000);

afterAll(() => portal?.stop());

/** A new visitor: the one phone page with its cookies cleared. */
async function visitor(): Promise<void> {
  page = portal.page;
  await page.context().clearCookies();
}

let problems: string[] = [];
beforeEach(() => {
  problems = [];
});
/** The page as it is now, checked under the router's `pattern` (and named `name` in what fails). */
async function check(pattern: string, name = pattern): Promise<void> {
  checked.add(pattern);
  problems.push(...(await phoneProblems(page, name)));
}

const heading = () => page.getByRole('heading', { level: 1 }).innerText();
const entry = () => `${app.origin}/portal/?${organizationQuery(app)}`;

async function newCard(): Promise<void> {
  await page.getByLabel('A new card').check();
  await page.getByLabel('Name on card').fill('Maria Gonzalez');
  await page.getByLabel('Card number').fill('4242424242424242');
  await page.getByLabel('Expiry month (MM)').fill('08');
  await page.getByLabel('Expiry year (YY)').fill('39');
  await page.getByLabel('Security code').fill('123');
}

async function signIn(email: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
}

let made: Awaited<ReturnType<typeof customerWithAccount>>;
let autopayAccount: Schemas['DebtAccount'];
let email: string;

test('a debtor who registered with a password sets up autopay, accepts a settlement as a 6-month plan, signs out and back in, all without a link', async () => {
  made = await customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', date_of_birth: '1984-03-12', phone: uniquePhone('512'), address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } },
    { balance: 184_250, external_account_number: unique('AN') },
  );
  await app.sandbox.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: made.account.id } }, body: { discount_percentage: 40, months_period: 6 } as Schemas['SettlementOfferCreate'] });
  autopayAccount = await newDebtAccount(app.sandbox, made.customer.id, { balance: 50_000, external_id: unique('ACC'), external_account_number: unique('AP') });
  email = `${unique('maria')}@mail.debt-collection.example`;

  await visitor();
  await page.goto(entry());
  await check('/', 'find my account');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await check('/register');
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Last 4 of SSN').fill('4417');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Choose your sign-in' }).waitFor();
  await check('/register/account');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create my account' }).click();
  expect(await heading()).toBe('Check your e-mail');
  await check('message', 'check your e-mail');
  await page.goto(await latestLink(app.sandbox, made.customer.id, email, /Confirm/));
  expect(await heading()).toBe('Your e-mail is confirmed');
  await check('/confirm-email');
  await page.getByRole('link', { name: 'Sign in' }).click();
  await check('/sign-in');
  await signIn(email);
  await check('/accounts');

  // The settlement, signed in: the header and "Sign out", and every way the offer allows.
  await page.goto(`${app.origin}/portal/accounts/${made.account.id}`);
  await check('/accounts/:accountId', 'account with an offer');
  await page.getByRole('link', { name: 'Settle this account' }).click();
  await page.getByRole('heading', { name: /^Settle account/ }).waitFor();
  expect(await page.getByRole('navigation', { name: 'Portal' }).getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  expect(await page.getByLabel('Payment date', { exact: true }).count()).toBe(1);
  await check('/accounts/:accountId/settlement');
  await page.screenshot({ path: `${SHOTS}/portal-settlement-signed-in-375.png`, fullPage: true });
  await page.getByLabel(/Pay over time, within 6 months/).check();
  await page.getByLabel('How often').selectOption('monthly');
  await newCard();
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await page.getByRole('button', { name: /^Settle for/ }).click();
  await page.getByText('Your settlement is set up.').waitFor();
  const offers = (await app.sandbox.GET('/settlement-offers', { params: { query: { debt_account_id: made.account.id } } })).data!.data;
  expect(offers[0]).toMatchObject({ status: 'accepted', accepted_option: 'payment_plan' });
  const plan = (await app.sandbox.GET('/payment-plans/{id}', { params: { path: { id: offers[0]!.payment_plan_id! } } })).data!.data;
  expect(plan.charges).toHaveLength(6);

  // Autopay on the other account, with the card the plan saved.
  await page.goto(`${app.origin}/portal/accounts/${autopayAccount.id}`);
  await page.getByRole('link', { name: 'Autopay' }).click();
  await page.getByRole('heading', { name: 'Autopay' }).waitFor();
  await check('/accounts/:accountId/autopay');
  await page.screenshot({ path: `${SHOTS}/portal-autopay-375.png`, fullPage: true });
  await page.getByLabel('Pay the full balance').check();
  await page.getByLabel('Day of each month').selectOption('15');
  await page.getByRole('button', { name: 'Turn on autopay' }).click();
  await page.getByText('Autopay is on.', { exact: true }).waitFor();
  expect(await page.locator('main').innerText()).toContain('Autopay is on: the full balance on day 15 of each month.');

  // Out, and back in with the password: everything is still there.
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('button', { name: 'Sign out' }).click();
  expect(await heading()).toBe('You are signed out');
  await check('message', 'signed out');
  await page.screenshot({ path: `${SHOTS}/portal-signed-out-375.png`, fullPage: true });
  expect(await page.locator('main').getByRole('link', { name: 'Find my account' }).count()).toBe(1);
  await page.locator('main').getByRole('link', { name: 'Sign in' }).click();
  await signIn(email);
  await page.goto(`${app.origin}/portal/accounts/${autopayAccount.id}/autopay`);
  expect(await page.locator('main').innerText()).toContain('Autopay is on: the full balance on day 15 of each month.');
  await page.goto(`${app.origin}/portal/accounts/${made.account.id}`);
  expect(await page.locator('main').innerText()).toContain('Payment plan');
  expect(problems).toEqual([]);
});

test('a dispute whose details hold a 300-character word is 375 px wide, and every page of a signed-in debtor fits', async () => {
  const other = await newDebtAccount(app.sandbox, made.customer.id, { balance: 30_000, external_id: unique('ACC'), external_account_number: unique('DS') });
  const form = new FormData();
  form.append('name', 'Itemized statement');
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'statement.pdf');
  const uploaded = await fetch(`${app.baseUrl}/debt-accounts/${other.id}/documents`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.sandbox_token}` }, body: form });
  const documentId = ((await uploaded.json()) as { data: { id: string } }).data.id;
  const methods = (await app.sandbox.GET('/customers/{id}/payment-methods', { params: { path: { id: made.customer.id } } })).data!.data;
  const charge = (await app.sandbox.POST('/charges', { body: { debt_account_id: other.id, amount: 2_500, payment_method_id: methods[0]!.id } })).data!.data;

  // A settled account: its transactions in the debtor's words, from the one table.
  const settled = await newDebtAccount(app.sandbox, made.customer.id, { balance: 20_000, external_id: unique('ACC'), external_account_number: unique('ST') });
  const offer = (await app.sandbox.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: settled.id } }, body: { discount_percentage: 50, months_period: 0 } as Schemas['SettlementOfferCreate'] })).data!.data;
  expect((await app.sandbox.POST('/settlement-offers/{id}/accept', { params: { path: { id: offer.id } }, body: { option: 'full_amount', payment_method_id: methods[0]!.id } })).response.status).toBe(200);

  const portalPath = `${app.origin}/portal`;
  await page.goto(`${portalPath}/accounts/${settled.id}`);
  const transactions = await page.getByRole('region', { name: 'Transactions' }).innerText();
  expect(transactions).toContain('Settlement discount');
  expect(transactions).toContain('Payment · Paid');
  expect(transactions).not.toMatch(/settlement_write_off|succeeded/);
  await check('/accounts/:accountId', 'a settled account');
  await page.goto(`${portalPath}/accounts/${other.id}/checkout`);
  await check('/accounts/:accountId/checkout');
  await page.goto(`${portalPath}/accounts/${other.id}/plan`);
  await check('/accounts/:accountId/plan');
  await page.goto(`${portalPath}/accounts/${other.id}/receipts/${charge.id}`);
  await check('/accounts/:accountId/receipts/:chargeId');
  await page.goto(`${portalPath}/accounts/${other.id}/documents`);
  await check('/accounts/:accountId/documents');
  await page.goto(`${portalPath}/accounts/${other.id}/documents/${documentId}`);
  await check('/accounts/:accountId/documents/:documentId');
  // The validation notice as the account page links it (a letter: the customer gave no E-SIGN consent).
  await app.sandbox.PUT('/settings', { body: { mailing_address: '100 Congress Ave, Suite 400\nAustin, TX 78701' } });
  const noticed = await newDebtAccount(app.sandbox, made.customer.id, {
    balance: 30_000,
    external_id: unique('ACC'),
    external_account_number: unique('VN'),
    itemization: { itemization_date: '2026-06-30', kind: 'charge_off', amount: 28_500, fees: 1_500 },
  } as Partial<Schemas['DebtAccountCreate']>);
  const sent = await app.sandbox.POST('/debt-accounts/{id}/validation-notice', { params: { path: { id: noticed.id } }, body: {} });
  expect(sent.response.status).toBe(201);
  await page.goto(`${portalPath}/accounts/${noticed.id}/validation-notice`);
  await check('/accounts/:accountId/validation-notice');
  await page.goto(`${portalPath}/accounts/${UNKNOWN_UUID}`);
  expect(await heading()).toBe('Account not found');
  await check('message', 'account not found');

  await page.goto(`${portalPath}/contact`);
  await check('/contact', 'contact (signed in)');
  await page.getByLabel('What is it about?').selectOption({ index: 1 });
  await page.getByLabel('Subject').fill('My balance');
  await page.getByLabel('Message').fill('Why is it higher than in October?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('heading', { name: 'My balance' }).waitFor();
  await check('/tickets/:ticketId', 'ticket (signed in)');

  await page.goto(`${portalPath}/accounts/${other.id}/dispute`);
  await check('/accounts/:accountId/dispute');
  const word = `https://statements.example/${'x'.repeat(300 - 'https://statements.example/'.length)}`;
  expect(word).toHaveLength(300);
  await page.getByLabel('The amount is wrong').check();
  await page.getByLabel('Details (optional)').fill(`My statement: ${word}`);
  await page.getByRole('button', { name: 'Send my dispute' }).click();
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(await page.locator('main').innerText()).toContain(word.slice(0, 40));
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(375);
  await check('/disputes/:disputeId');
  await page.screenshot({ path: `${SHOTS}/portal-dispute-long-word-375.png`, fullPage: true });
  expect(problems).toEqual([]);
});

test('a guest, a found guest and a link that asks for verification: every page fits, and a page a guest may not use says why', async () => {
  const portalPath = `${app.origin}/portal`;
  // A guest who found the account: the guest dispute's pages, and autopay refused with a way on.
  await visitor();
  await page.goto(`${portalPath}/dispute-a-debt?${organizationQuery(app)}`);
  await check('/dispute-a-debt');
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Last 4 of SSN').fill('4417');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Which debt do you dispute?' }).waitFor();
  await check('/dispute-a-debt/accounts');
  await page.goto(`${portalPath}/dispute-a-debt/accounts/${autopayAccount.id}`);
  await check('/dispute-a-debt/accounts/:accountId');
  await page.goto(`${portalPath}/accounts/${autopayAccount.id}/autopay`);
  expect(await heading()).toBe('Sign in to use this');
  expect(await page.locator('main').getByRole('link', { name: 'Create an account' }).count()).toBe(1);
  await check('message', 'autopay refused to a found guest');
  await page.screenshot({ path: `${SHOTS}/portal-refused-375.png`, fullPage: true });

  // A link asking for verification.
  await visitor();
  const session = await newSession(app.sandbox, { customer_id: made.customer.id, destination: 'accounts_list', verification: true });
  await page.goto(session.portal_url);
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  await check('/verify');

  // A guest: the entry's pages, "Contact us" and its thread, the reset link, the opt-out link, a page after signing out.
  await visitor();
  await page.goto(`${portalPath}/pay-by-account-number?${organizationQuery(app)}`);
  await check('/pay-by-account-number');
  await page.goto(`${portalPath}/forgot-password?${organizationQuery(app)}`);
  await check('/forgot-password');
  await page.getByLabel('E-mail').fill(email);
  await page.getByRole('button', { name: 'Send me a link' }).click();
  await check('message', 'reset link sent');
  await page.goto(await latestLink(app.sandbox, made.customer.id, email, /Reset/));
  await check('/reset-password');
  await page.goto(`${portalPath}/contact`);
  await check('/contact', 'contact (guest)');
  await page.getByLabel('Your name').fill('Maria Gonzalez');
  await page.getByLabel('E-mail').fill('maria.g@mail.debt-collection.example');
  await page.getByLabel('Phone').fill('512 555 0100');
  await page.getByLabel('What is it about?').selectOption({ index: 1 });
  await page.getByLabel('Subject').fill('A letter I received');
  await page.getByLabel('Message').fill('Is this letter from you?');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('heading', { name: 'A letter I received' }).waitFor();
  await check('/tickets/:ticketId', 'ticket (guest)');
  // The newest e-mail (a letter, such as the validation notice, has no opt-out link).
  const mail = (await app.sandbox.GET('/communications', { params: { query: { customer_id: made.customer.id, limit: 20 } } })).data!.data.find((row) => row.channel === 'email')!;
  await page.goto(/(http\S+\/opt-out\/\S+)/.exec(mail.text)![1]!);
  await check('/opt-out/:link');
  await page.context().clearCookies({ name: 'portal_session' });
  const response = await page.goto(`${portalPath}/accounts`);
  expect(response!.status()).toBe(401);
  expect(await page.locator('main').getByRole('link', { name: 'Sign in' }).count()).toBe(1);
  expect(await page.locator('main').getByRole('link', { name: 'Find my account' }).count()).toBe(1);
  await check('message', 'signed out, then a page of accounts');
  expect(problems).toEqual([]);
});

test('every page the Portal renders was checked', () => {
  const pages = portalGetPaths(app.deps).filter((path) => !path.startsWith('/api/') && !(path in NOT_PAGES));
  expect(pages.filter((path) => !checked.has(path))).toEqual([]);
  // The list is the router's, not a copy: it names the pages checked above.
  expect(pages).toContain('/accounts/:accountId/autopay');
  expect(pages.length).toBeGreaterThan(20);
});
