/**
 * The opt-out link of a debtor's e-mail in a real browser (Chromium from @sparticuz/chromium,
 * driven by playwright-core): the page names the organization, opening it changes nothing, one
 * button opts out and confirms; a forged link says nothing changed. Each page passes axe (no
 * serious or critical violation).
 */
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type Page } from 'playwright-core';
import { newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { seriousViolations } from '../support/browser';

jest.setTimeout(90_000);

let app: TestApp;
let browser: Browser;
beforeAll(async () => {
  app = await startTestApp();
  browser = await playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function accessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

test('a debtor opts out from the link of a receipt, without signing in; a forged link changes nothing', async () => {
  const api = app.sandbox;
  const customer = await newCustomer(api, { email: `${unique('reader')}@mail.debt-collection.example` });
  const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 5000 });
  const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data;
  expect((await api.POST('/charges', { body: { amount: 500, debt_account_id: account.id, payment_method_id: method.id, send_email: true } })).response.status).toBe(201);
  const [receipt] = (await api.GET('/communications', { params: { query: { customer_id: customer.id, kind: 'receipt' } } })).data!.data;
  const link = /To stop receiving these e-mails, open: (\S+)/.exec(receipt!.text)![1]!;

  const context = await browser.newContext({ viewport: { width: 375, height: 812 } });
  const page = await context.newPage();
  await page.goto(link);
  await expect(page.getByRole('heading', { name: 'Stop e-mails from Acme Recovery LLC' }).isVisible()).resolves.toBe(true);
  await accessible(page);
  expect((await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).data!.data.communication_preferences.email).toBe('allowed');

  await page.getByRole('button', { name: 'Stop e-mails' }).click();
  await expect(page.getByRole('heading', { name: 'You will no longer receive e-mails' }).isVisible()).resolves.toBe(true);
  await accessible(page);
  expect((await api.GET('/customers/{id}', { params: { path: { id: customer.id } } })).data!.data.communication_preferences).toMatchObject({ email: 'opted_out', changed_by: 'link' });

  const forged = link.replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
  const answer = await page.goto(forged);
  expect(answer!.status()).toBe(400);
  await expect(page.getByRole('heading', { name: 'This link is not valid' }).isVisible()).resolves.toBe(true);
  await expect(page.getByText('Nothing was changed.').isVisible()).resolves.toBe(true);
  await accessible(page);
  await context.close();
});
