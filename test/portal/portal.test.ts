/**
 * The Portal in a real browser (Chromium from @sparticuz/chromium, driven by playwright-core):
 * one server and one browser for the file, a fresh browser context per scenario. Every page
 * is checked by axe (no serious or critical violation) and saved as a 375 px screenshot to
 * the git-ignored screenshots/ folder.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Schemas } from '../../client';
import { launchBrowser, seriousViolations } from '../support/browser';
import { phonePage } from '../support/portal-chromium';
import { startTestApp, type TestApp } from '../support/test-app';
import { balanceOf, customerWithAccount, newSession, unique, uniquePhone } from '../support/fixtures';
import { sandboxDayAfter } from '../support/sandbox-clock';
import { payloadErrors, subscribeToEverything } from '../support/webhooks';
import { decodeEventBody } from '../../server/kernel/event-body';

const screenshots = join(resolve(__dirname, '../..'), 'screenshots');
jest.setTimeout(90_000);

let app: TestApp;
let browser: Browser;
const elsewhere: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

let shared: { context: BrowserContext; page: Page } | undefined;

/**
 * The one page, its cookies cleared: a new visitor. (The Chromium of @sparticuz/chromium runs
 * as a single process, which ends when its last context closes; so one context serves all.)
 */
async function newPage(): Promise<{ context: { close(): Promise<void> }; page: Page }> {
  if (!shared) {
    // Nothing but our own server: any other host is refused and fails the run.
    const page = await phonePage(browser, app.origin, elsewhere);
    shared = { context: page.context(), page };
  }
  await shared.context.clearCookies();
  return { context: { close: async () => undefined }, page: shared.page };
}

/** axe on the page as it is, and its screenshot. */
async function check(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
  await page.screenshot({ path: join(screenshots, `portal-${name}.png`), fullPage: true });
}

interface Made {
  customer: Schemas['Customer'];
  account: Schemas['DebtAccount'];
}

async function debtor(account: Partial<Schemas['DebtAccountCreate']> = {}, customer: Partial<Schemas['CustomerCreate']> = {}): Promise<Made> {
  return customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', date_of_birth: '1984-03-12', phone: uniquePhone('512'), address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' }, ...customer },
    { balance: 184250, external_account_number: unique('AN'), ...account },
  );
}

async function trackingEvents(name: string): Promise<unknown[]> {
  const rows: { body: Buffer }[] = await app.db('webhook_events').where({ name }).select('body');
  return rows.map((row) => decodeEventBody(row.body));
}

async function expectTracked(name: string, account?: Made): Promise<void> {
  const payloads = await trackingEvents(name);
  expect(payloads.length).toBeGreaterThan(0);
  for (const data of payloads) expect(payloadErrors(name, { data })).toEqual([]);
  if (account) {
    expect(payloads).toContainEqual(
      expect.objectContaining({
        event: name,
        trackables: expect.objectContaining({ debt_account: { uuid: account.account.id, external_id: account.account.external_id } }),
      }),
    );
  }
}

async function payWithNewCard(page: Page, number: string): Promise<void> {
  await page.getByLabel('A new card').check();
  await page.getByLabel('Name on card').fill('Maria Gonzalez');
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month (MM)').fill('08');
  await page.getByLabel('Expiry year (YY)').fill('39');
  await page.getByLabel('Security code').fill('123');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
}

describe('a customer session link', () => {
  test('opens, verifies, pays part with 4242…, and sees the receipt and the lowered balance', async () => {
    const made = await debtor();
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_checkout', verification: true, return_url: 'https://www.acme-recovery.example/thanks' });
    const { context, page } = await newPage();
    const opened = await page.goto(session.portal_url);
    // The token leaves the address bar (and verification comes first).
    expect(new URL(page.url()).pathname).toBe('/portal/verify');
    expect(page.url()).not.toContain('/s/');
    const cookie = (await shared!.context.cookies()).find((c) => c.name === 'portal_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/portal' });
    expect(opened!.headers()['content-security-policy']).toContain("default-src 'none'");
    // Verification first; then the page the link named.
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    await check(page, 'verify');
    await page.getByLabel('Last 4 of SSN').fill('4417');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Make a payment' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/portal/accounts/${made.account.id}/checkout`);
    await check(page, 'checkout');

    await page.getByLabel('Another amount').check();
    await page.getByLabel('Amount', { exact: true }).fill('50.00');
    await payWithNewCard(page, '4242424242424242');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    const receipt = await page.locator('main').innerText();
    expect(receipt).toContain('$50.00');
    expect(receipt).toContain('Card ending 4242');
    expect(receipt).toContain('$1,792.50');
    expect(await page.getByRole('link', { name: 'Return to the website' }).getAttribute('href')).toBe('https://www.acme-recovery.example/thanks');
    await check(page, 'receipt');
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(184250 - 5000);

    await page.getByRole('link', { name: 'Back to the account' }).click();
    await page.getByRole('heading', { name: /^Account/ }).waitFor();
    expect(await page.locator('main').innerText()).toContain('$1,792.50');
    await check(page, 'account');
    await page.getByRole('link', { name: 'My accounts' }).click();
    await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
    await check(page, 'accounts');
    await context.close();

    await expectTracked('customer.session.verification.success', made);
    await expectTracked('customer.checkout.policy.accepted', made);
    await expectTracked('customer.checkout.one-time-payment.amount.success', made);
  });

  test('a declined card says so and changes no balance', async () => {
    const made = await debtor();
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_checkout' });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    await page.getByLabel('The full balance, $1,842.50').check();
    await payWithNewCard(page, '4000000000000002');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toMatch(/declined.*Nothing was charged/);
    await check(page, 'declined');
    await context.close();
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(184250);
    await expectTracked('customer.checkout.one-time-payment.full-amount.failed', made);
  });

  test('sets up a weekly plan from the banner and sees its schedule', async () => {
    const made = await debtor({ balance: 40000 });
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_detail' });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    await page.getByRole('heading', { name: 'Pay over time' }).waitFor();
    await page.getByRole('link', { name: 'Set up a payment plan' }).click();
    await page.getByRole('heading', { name: 'Set up a payment plan' }).waitFor();
    await check(page, 'plan');
    await page.getByLabel('How often').selectOption('weekly');
    await page.getByLabel('Amount of each payment').fill('100.00');
    await page.getByLabel('A new card').check();
    await page.getByLabel('Name on card').fill('Maria Gonzalez');
    await page.getByLabel('Card number').fill('4242424242424242');
    await page.getByLabel('Expiry month (MM)').fill('08');
    await page.getByLabel('Expiry year (YY)').fill('39');
    await page.getByRole('checkbox', { name: /payment policy/ }).check();
    await page.getByRole('button', { name: 'Set up plan' }).click();
    await page.getByText('Your payment plan is set up').waitFor();
    const rows = page.locator('table', { has: page.locator('caption', { hasText: 'Payment schedule' }) }).locator('tbody tr');
    expect(await rows.count()).toBe(4);
    expect(await rows.first().innerText()).toContain('$100.00');
    await check(page, 'plan-schedule');
    await context.close();
    const { data } = await app.sandbox.GET('/payment-plans', { params: { query: { debt_account_id: made.account.id } } });
    expect(data!.data[0]).toMatchObject({ frequency: 'weekly', amount: 10000, status: 'active' });
    await expectTracked('customer.call-to-action.modal.displayed', made);
    await expectTracked('customer.call-to-action.modal.action-button.clicked', made);
    await expectTracked('customer.checkout.payment-plan.success', made);
    await expectTracked('customer.checkout.payment-plan.custom.success', made);
  });

  test('an expired link shows the expired page (410)', async () => {
    const made = await debtor();
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, destination: 'accounts_list', valid_until: 1 });
    app.clock.advance(2 * 3_600_000);
    const { context, page } = await newPage();
    const response = await page.goto(session.portal_url);
    expect(response!.status()).toBe(410);
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await check(page, 'expired');
    await context.close();
  });

  test('five wrong verification answers lock the link for 15 minutes, and reopening it says so at once', async () => {
    const made = await debtor();
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_checkout', verification: true });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    for (let attempt = 1; attempt <= 4; attempt++) {
      await page.getByLabel('Last 4 of SSN').fill('0000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('Those details do not match').waitFor();
    }
    await page.getByLabel('Last 4 of SSN').fill('0000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Too many tries' }).waitFor();
    await check(page, 'locked');
    // Reopening the checkout link: the lock is said at once, with when to try again and whom to ask; no form to answer.
    const again = await page.goto(session.portal_url);
    expect(again!.status()).toBe(429);
    await page.getByRole('heading', { name: 'Too many tries' }).waitFor();
    const said = await page.locator('main').innerText();
    // In the debtor's zone (ZIP 78704: Austin, Texas), the one the communications use; never UTC.
    const until = new Date(app.clock.now().getTime() + 15 * 60_000).toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: 'America/Chicago', timeZoneName: 'short' });
    expect(until).toMatch(/C[SD]T$/);
    expect(said).toContain(`Try again after ${until} (in 15 minutes)`);
    expect(said).not.toContain('UTC');
    expect(said).toContain('contact Acme Recovery LLC, who sent you this link');
    expect(await page.getByLabel('Last 4 of SSN').count()).toBe(0);
    await check(page, 'locked-reopened');
    // Once the 15 minutes have passed, the questions are back and the right answer opens the checkout.
    app.clock.advance(15 * 60_000);
    await page.goto(session.portal_url);
    await page.getByLabel('Last 4 of SSN').fill('4417');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Make a payment' }).waitFor();
    await context.close();
    expect((await trackingEvents('customer.session.verification.failed')).length).toBeGreaterThanOrEqual(5);
  });
});

describe('the checkout with a saved card', () => {
  test('shows a new card\'s fields only when chosen, and refuses a saved card with a new card typed, charging nothing', async () => {
    const made = await debtor({ balance: 30000 });
    await app.sandbox.POST('/customers/{id}/payment-methods', {
      params: { path: { id: made.customer.id } },
      body: { card: { card_holder: 'Maria Gonzalez', card_number: '5555555555554444', card_expiration_month: 8, card_expiration_year: 39 } },
    });
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_checkout' });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    await page.getByRole('heading', { name: 'Make a payment' }).waitFor();
    const saved = page.getByLabel('Your Mastercard card ending 4444');
    expect(await saved.isChecked()).toBe(true);
    expect(await page.getByLabel('Card number').isVisible()).toBe(false);
    expect(await page.getByLabel('Routing number').isVisible()).toBe(false);
    await check(page, 'checkout-saved');

    await page.getByLabel('Another amount').check();
    await page.getByLabel('Amount', { exact: true }).fill('50.00');
    await page.getByLabel('A new card').check();
    expect(await page.getByLabel('Card number').isVisible()).toBe(true);
    expect(await page.getByLabel('Routing number').isVisible()).toBe(false);
    await page.getByLabel('Card number').fill('4242424242424242');
    // Back to the saved card: the new card's fields hide, with the number still typed in them.
    await saved.check();
    expect(await page.getByLabel('Card number').isVisible()).toBe(false);
    await page.getByRole('checkbox', { name: /payment policy/ }).check();
    const refused = page.waitForResponse((r) => r.url().endsWith('/pay') && r.request().method() === 'POST');
    await page.getByRole('button', { name: /^Pay/ }).click();
    expect((await refused).status()).toBe(422);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toBe(
      "You chose to pay with your Mastercard card ending 4444, but a new card's number was also entered. Nothing was charged. Choose one way to pay and press Pay again.",
    );
    await check(page, 'checkout-two-ways');
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(30000);
    expect((await app.sandbox.GET('/charges', { params: { query: { debt_account_id: made.account.id } } })).data!.data).toEqual([]);

    // Choosing the new card pays with it, as the receipt says.
    await page.getByLabel('Amount', { exact: true }).fill('50.00');
    await payWithNewCard(page, '4242424242424242');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Card ending 4242');
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(25000);
    await context.close();
  });
});

describe('a payment on a later day', () => {
  test('with a new card, as the form says, saves the card and schedules the charge without asking to tick "save"', async () => {
    const made = await debtor({ balance: 30000 });
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_checkout' });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    await page.getByLabel('Another amount').check();
    await page.getByLabel('Amount', { exact: true }).fill('50.00');
    const day = await sandboxDayAfter(app.sandbox, 7);
    await page.getByLabel('Payment date').fill(day);
    await payWithNewCard(page, '4242424242424242');
    expect(await page.getByLabel('Save this card for next time').isChecked()).toBe(false);
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    expect(await page.getByRole('status').innerText()).toMatch(/^Your payment is scheduled for /);
    await context.close();
    const charges = (await app.sandbox.GET('/charges', { params: { query: { debt_account_id: made.account.id } } })).data!.data;
    expect(charges).toEqual([expect.objectContaining({ status: 'scheduled', scheduled_at: day, amount: 5000 })]);
    const methods = (await app.sandbox.GET('/customers/{id}', { params: { path: { id: made.customer.id }, query: { include: 'payment_methods' } as never } })).data!.data as { payment_methods?: { type: string; card_token?: unknown }[] };
    expect(methods.payment_methods).toEqual([expect.objectContaining({ type: 'card', card_token: expect.objectContaining({ card_number: expect.stringContaining('4242') }) })]);
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(30000);
  });
});

describe('a page that is not found', () => {
  test('"Account not found" leads a signed-in person back to their accounts', async () => {
    const made = await debtor();
    const session = await newSession(app.sandbox, { customer_id: made.customer.id, destination: 'accounts_list' });
    const { context, page } = await newPage();
    await page.goto(session.portal_url);
    await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
    const missing = await page.goto(`${app.origin}/portal/accounts/00000000-0000-4000-8000-000000000000`);
    expect(missing!.status()).toBe(404);
    await page.getByRole('heading', { name: 'Account not found' }).waitFor();
    await check(page, 'account-not-found');
    await page.getByRole('link', { name: 'My accounts' }).click();
    await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
    expect(await page.locator('main').innerText()).toContain(made.account.external_account_number!);
    await context.close();
  });
});

describe('a guest', () => {
  test('finds an account by phone and SSN last 4 and pays it in full', async () => {
    const made = await debtor({ balance: 12345 });
    const { context, page } = await newPage();
    await page.goto(`${app.origin}/portal/?organization=${app.organization.organization_id}&environment=sandbox`);
    await check(page, 'guest');
    await page.getByLabel('Phone').fill(made.customer.phone!);
    await page.getByLabel('Last 4 of SSN').fill('9999');
    await page.getByRole('button', { name: 'Find my account' }).click();
    await page.getByText('We could not find an account').waitFor();
    await page.getByLabel('Phone').fill(made.customer.phone!);
    await page.getByLabel('Last 4 of SSN').fill('4417');
    await page.getByRole('button', { name: 'Find my account' }).click();
    await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
    await page.getByRole('link', { name: /^Make a payment/ }).click();
    await page.getByLabel('The full balance, $123.45').check();
    await payWithNewCard(page, '4242424242424242');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.getByRole('heading', { name: 'Thank you' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('$0.00');
    await context.close();
    expect(await balanceOf(app.sandbox, made.account.id)).toBe(0);
    await expectTracked('guest.customer.checkout.verification.failed');
    await expectTracked('guest.customer.checkout.verification.success', made);
    await expectTracked('guest.customer.one-time-payment.full-amount.success', made);
  });
});

test('no page asked any other host for anything', () => {
  expect(elsewhere).toEqual([]);
});
