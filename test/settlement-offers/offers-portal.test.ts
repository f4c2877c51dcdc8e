/**
 * Settlement offers in the Portal, in Chromium with axe on every page: the account shows its
 * pending offer first; its checkout pays the settled sum now, on a later day or over time; a
 * guest who found the account pays it in full. Each outcome is a tracking event in the
 * document's shape.
 */
import type { Page } from 'playwright-core';
import type { Schemas } from '../../client';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { accountOf, customerWithAccount, newSession, testCard, unique, uniquePhone } from '../support/fixtures';
import { sandboxDayAfter } from '../support/sandbox-clock';
import { payloadErrors } from '../support/webhooks';
import { decodeEventBody } from '../../server/kernel/event-body';

jest.setTimeout(90_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;

beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }));
}, 120_000);

afterAll(() => portal?.stop());

async function axe(): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

async function debtorWithOffer(offer: Record<string, unknown>, balance = 184_250) {
  const phone = uniquePhone('512');
  const made = await customerWithAccount(app.sandbox, { ssn_last4: '4417', phone }, { balance, external_account_number: unique('AN') });
  await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: made.customer.id } }, body: { card: testCard() } });
  const { data } = await app.sandbox.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: made.account.id } }, body: offer as Schemas['SettlementOfferCreate'] });
  return { ...made, offer: data!.data };
}

async function tracked(name: string, accountId: string): Promise<void> {
  const rows: { body: Buffer }[] = await app.db('webhook_events').where({ name }).select('body');
  const mine = rows.map((row) => decodeEventBody(row.body) as { trackables?: { debt_account?: { uuid: string } } }).filter((data) => data.trackables?.debt_account?.uuid === accountId);
  expect([name, mine.length]).toEqual([name, 1]);
  expect(payloadErrors(name, { data: mine[0] })).toEqual([]);
}

async function newCard(number: string): Promise<void> {
  await page.getByLabel('A new card').check();
  await page.getByLabel('Name on card').fill('Maria Gonzalez');
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry month (MM)').fill('08');
  await page.getByLabel('Expiry year (YY)').fill('39');
  await page.getByLabel('Security code').fill('123');
}

const settle = () => page.getByRole('button', { name: /^Settle for/ }).click();

test('the account shows its offer first; over time with the saved card: the plan is set up within the months', async () => {
  const made = await debtorWithOffer({ discount_percentage: 40, months_period: 6, expires_at: new Date(Date.now() + 20 * 86_400_000).toISOString() });
  const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_detail' });
  await page.context().clearCookies();
  await page.goto(session.portal_url);
  const banner = page.getByRole('heading', { name: 'Settle for $1,105.50 — save $737.00' });
  await banner.waitFor();
  // First on the page, before the summary.
  expect(await page.locator('h2').first().innerText()).toBe('Settle for $1,105.50 — save $737.00');
  expect(await page.locator('main').innerText()).toContain('Offer ends');
  await axe();
  await page.getByRole('link', { name: 'Settle this account' }).click();
  await page.getByRole('heading', { name: /^Settle account/ }).waitFor();
  await axe();
  await page.getByLabel(/Pay over time, within 6 months/).check();
  await page.getByLabel('How often').selectOption('monthly');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText('Your settlement is set up.').waitFor();
  const offer = (await app.sandbox.GET('/settlement-offers/{id}', { params: { path: { id: made.offer.id } } })).data!.data;
  expect(offer).toMatchObject({ status: 'accepted', accepted_option: 'payment_plan' });
  const plan = (await app.sandbox.GET('/payment-plans/{id}', { params: { path: { id: offer.payment_plan_id! } } })).data!.data;
  expect(plan.charges.map((c) => c.amount)).toEqual([18_425, 18_425, 18_425, 18_425, 18_425, 18_425]);
  await tracked('customer.checkout.settlement-offer.payment-plan.success', made.account.id);
});

test('in full: a declined card says so and charges nothing; another card settles the account; a later day is scheduled', async () => {
  const made = await debtorWithOffer({ discounted_amount: 50_000, months_period: 0 }, 100_000);
  const session = await newSession(app.sandbox, { customer_id: made.customer.id, debt_account_id: made.account.id, destination: 'account_detail' });
  await page.context().clearCookies();
  await page.goto(session.portal_url);
  await page.getByRole('link', { name: 'Settle this account' }).click();
  await newCard('4000000000000002');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText(/Your payment was declined/).waitFor();
  await axe();
  await tracked('customer.checkout.settlement-offer.full-amount.failed', made.account.id);
  await newCard('4242424242424242');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText('Your account is settled. Thank you.').waitFor();
  expect(await accountOf(app.sandbox, made.account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
  await tracked('customer.checkout.settlement-offer.full-amount.success', made.account.id);

  const later = await debtorWithOffer({ discounted_amount: 50_000, months_period: 0 }, 100_000);
  const laterSession = await newSession(app.sandbox, { customer_id: later.customer.id, debt_account_id: later.account.id, destination: 'account_detail' });
  await page.context().clearCookies();
  await page.goto(laterSession.portal_url);
  await page.getByRole('link', { name: 'Settle this account' }).click();
  await page.getByLabel('Payment date').fill(await sandboxDayAfter(app.sandbox, 10));
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText('Your settlement is set up.').waitFor();
  await tracked('customer.checkout.settlement-offer.full-amount.scheduled.success', later.account.id);
});

test('a guest who found the account settles it in full with a new card', async () => {
  const made = await debtorWithOffer({ discount_percentage: 50, months_period: 0 }, 20_000);
  await page.context().clearCookies();
  await page.goto(`${app.origin}/portal/?organization=${app.organization.organization_id}&environment=sandbox`);
  await page.getByLabel('Phone').fill(made.customer.phone!);
  await page.getByLabel('Last 4 of SSN').fill('4417');
  await page.getByRole('button', { name: 'Find my account' }).click();
  await page.getByRole('heading', { name: 'Your accounts' }).waitFor();
  await page.goto(`${app.origin}/portal/accounts/${made.account.id}/settlement`);
  await page.getByRole('heading', { name: 'Settle for $100.00 — save $100.00' }).waitFor();
  await axe();
  await newCard('4000000000000002');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText(/Your payment was declined/).waitFor();
  await tracked('guest.customer.checkout.settlement-offer.full-amount.failed', made.account.id);
  await newCard('4242424242424242');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await settle();
  await page.getByText('Your account is settled. Thank you.').waitFor();
  expect(await accountOf(app.sandbox, made.account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
  await tracked('guest.customer.checkout.settlement-offer.full-amount.success', made.account.id);
});
