/**
 * A guest disputes a debt from the Portal's guest entry, in Chromium (one browser for the file)
 * with axe on every page: a wrong answer at the verification step, the right one, the dispute
 * form, the dispute's page; the API then shows the guest's dispute holding the account, and the
 * three Portal events conform to the document.
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, testCard, unique, uniquePhone } from '../support/fixtures';
import { outboxEvents, payloadErrors } from '../support/webhooks';
import { organizationQuery } from '../portal-logins/portal-guest';

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

test('a guest passes the verification step, files a dispute, sees its page, and the account is held', async () => {
  const phone = uniquePhone('512');
  const { customer, account } = await customerWithAccount(
    app.sandbox,
    { ssn_last4: '4417', phone, address: { postal_code: '78704', line1: '12 Elm St', city: 'Austin', state: 'TX' } },
    { balance: 50_000, external_account_number: unique('AN') },
  );

  await page.goto(`${app.origin}/portal/?${organizationQuery(app)}`);
  await page.getByRole('link', { name: 'Dispute a debt' }).click();
  await page.getByRole('heading', { name: 'Dispute a debt' }).waitFor();
  await axe('verification');
  await page.getByLabel('Phone').fill(phone);
  await page.getByLabel('Last 4 of SSN').fill('9999');
  await page.getByRole('button', { name: 'Continue' }).click();
  expect(await page.getByRole('alert').textContent()).toBe('We could not find an account with those details. Check them and try again.');
  await axe('verification refused');
  const failed = await outboxEvents(app, 'guest.dispute.registration.verification.failed', () => true);
  expect(failed).toHaveLength(1);
  expect(failed[0]!.trackables).toEqual({});

  await page.getByLabel('Last 4 of SSN').fill('4417');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Dispute this debt' }).waitFor();
  expect(await page.getByText(`Account ${account.external_account_number}.`).count()).toBe(1);
  await axe('dispute form');
  const passed = await outboxEvents(app, 'guest.dispute.registration.verification.success', () => true);
  expect(passed.map((data) => [data.trackables.customer.uuid, data.trackables.debt_account.uuid])).toEqual([[customer.id, account.id]]);

  await page.getByRole('button', { name: 'Send my dispute' }).click();
  await page.getByText('Choose why you dispute this debt.').waitFor();
  await page.getByLabel('The amount is wrong').check();
  await page.getByLabel('Details (optional)').fill('The balance counts a fee I never agreed to.');
  await page.getByRole('button', { name: 'Send my dispute' }).click();
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(await page.getByRole('status').textContent()).toMatch(/We received your dispute/);
  expect(await page.getByText('The balance counts a fee I never agreed to.').count()).toBe(1);
  await axe('dispute page');

  const { data } = await app.sandbox.GET('/disputes', { params: { query: { debt_account_id: account.id } } });
  expect(data!.data).toHaveLength(1);
  const dispute = data!.data[0]!;
  expect(new URL(page.url()).pathname).toBe(`/portal/disputes/${dispute.id}`);
  expect(dispute).toMatchObject({ source: 'guest', in_writing: true, reason: 'wrong_amount', status: 'pending', hold: true, customer_id: customer.id });

  const created = await outboxEvents(app, 'guest.dispute.created', () => true);
  expect(created.map((event) => [event.trackables.customer.uuid, event.trackables.debt_account.uuid])).toEqual([[customer.id, account.id]]);
  const resource = await outboxEvents(app, 'debt-account-dispute.create', dispute.id);
  expect(resource).toEqual([expect.objectContaining({ status: 'pending', reason: 'wrong_amount' })]);
  expect(payloadErrors('guest.dispute.created', { data: created[0] })).toEqual([]);

  const method = await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } });
  const refused = await app.sandbox.POST('/charges', { body: { debt_account_id: account.id, payment_method_id: method.data!.data.id, amount: 1_000 } });
  expect(refused.response.status).toBe(409);
  expect(refused.error).toMatchObject({ errorCode: 'account_disputed' });

  // The verified session leads back to the open dispute rather than to a second form.
  await page.goto(`${app.origin}/portal/dispute-a-debt/form`);
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(new URL(page.url()).pathname).toBe(`/portal/disputes/${dispute.id}`);
});
