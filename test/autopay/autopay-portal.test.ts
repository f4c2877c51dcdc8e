/**
 * Turning autopay on in the Portal, in Chromium, as a customer with a saved card does it from
 * their link: the account page leads to Autopay; a custom amount and a day of the month turn it
 * on (the API shows it, and customer.checkout.autopay.custom.success is told); a bad amount is
 * said beside its field; stopping it there stops it. axe checks each page.
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { accountOf, accountWithCard, newSession } from '../support/fixtures';
import { outboxEvents } from '../support/webhooks';

jest.setTimeout(90_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;
beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }));
}, 120_000);
afterAll(() => portal?.stop());

async function noSeriousViolations(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

test('a customer with a saved card turns on autopay for a custom amount, sees a bad amount refused, and stops it', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 60_000);
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_detail' });
  await page.goto(session.portal_url);
  await page.getByRole('link', { name: 'Autopay' }).click();
  await page.getByRole('heading', { name: 'Autopay' }).waitFor();
  await noSeriousViolations(page, 'autopay');

  await page.getByLabel('Pay a custom amount').check();
  await page.getByRole('textbox', { name: 'Custom amount' }).fill('0.50');
  await page.getByLabel('Day of each month').selectOption('28');
  await page.getByRole('button', { name: 'Turn on autopay' }).click();
  expect(await page.locator('#err-amount').textContent()).toContain('at least the minimum payment');
  expect((await accountOf(app.sandbox, account.id)).autopay).toBeNull();
  await noSeriousViolations(page, 'autopay-error');

  await page.getByRole('textbox', { name: 'Custom amount' }).fill('125.00');
  await page.getByRole('button', { name: 'Turn on autopay' }).click();
  expect(await page.getByRole('status').textContent()).toBe('Autopay is on.');
  expect(await page.getByText('Autopay is on: $125.00 on day 28 of each month.').isVisible()).toBe(true);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ amount_type: 'custom', amount: 12_500, day_of_month: 28, payment_method_id: methodId });
  const told = await outboxEvents(app, 'customer.checkout.autopay.custom.success', (data) => data.trackables?.debt_account?.uuid === account.id);
  expect(told.map((data) => [data.event, data.trackables.customer.uuid])).toEqual([['customer.checkout.autopay.custom.success', customer.id]]);

  await page.getByRole('button', { name: 'Stop autopay' }).click();
  expect(await page.getByRole('status').textContent()).toBe('Autopay is off.');
  expect((await accountOf(app.sandbox, account.id)).autopay).toBeNull();
});
