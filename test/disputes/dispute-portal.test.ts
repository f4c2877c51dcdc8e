/**
 * Disputes in the Portal, in Chromium (one browser for the file, few page loads): a customer
 * disputes from the account page, sees the dispute, writes to the agency, and finds the account
 * "In dispute" with no way to pay; a session link to the dispute opens its page. Every page is
 * checked by axe (no serious or critical violation).
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, newSession, unique } from '../support/fixtures';
import { outboxEvents } from '../support/webhooks';

jest.setTimeout(90_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;
beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }));
}, 120_000);
afterAll(() => portal?.stop());

async function axe(name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

test('a customer disputes a debt, writes to the agency, and the account shows "In dispute" with no way to pay', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, { address: { postal_code: '78704' } }, { balance: 50_000, external_account_number: unique('AN') });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_detail' });
  await page.goto(session.portal_url);
  await page.getByRole('link', { name: 'Make a payment' }).waitFor();
  await page.getByRole('link', { name: 'Dispute this debt' }).click();
  await page.getByRole('heading', { name: 'Dispute this debt' }).waitFor();
  await axe('dispute form');
  await page.getByRole('button', { name: 'Send my dispute' }).click();
  await page.getByText('Choose why you dispute this debt.').waitFor();
  await page.getByLabel('I already paid it').check();
  await page.getByLabel('Details (optional)').fill('I paid the hospital in January.');
  await page.getByRole('button', { name: 'Send my dispute' }).click();

  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(await page.getByRole('status').textContent()).toMatch(/We received your dispute/);
  await axe('dispute page');
  await page.getByLabel('Write to us').fill('Here is when I paid: January 12.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByText('Here is when I paid: January 12.').waitFor();

  const dispute = (await app.sandbox.GET('/disputes', { params: { query: { debt_account_id: account.id } } })).data!.data[0]!;
  expect(dispute).toMatchObject({ source: 'portal', in_writing: true, reason: 'already_paid', status: 'pending', hold: true });
  expect(dispute.comments[0]).toMatchObject({ comment: 'Here is when I paid: January 12.', author: { name: customer.name, title: 'Customer' } });
  const tracked = await outboxEvents(app, 'customer.dispute.created', (data) => data.trackables?.debt_account?.uuid === account.id);
  expect(tracked).toHaveLength(1);

  await page.getByRole('link', { name: 'Back to the account' }).click();
  await page.getByText('In dispute', { exact: true }).waitFor();
  expect(await page.getByRole('link', { name: 'Make a payment' }).count()).toBe(0);
  await axe('account in dispute');

  // The session destination of a dispute opens its page.
  const link = await newSession(app.sandbox, { customer_id: customer.id, debt_account_dispute_id: dispute.id, destination: 'account_disputes_detail' });
  await page.context().clearCookies();
  await page.goto(link.portal_url);
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`/portal/disputes/${dispute.id}`);
});
