/**
 * The Portal's dispute form takes an optional file, in Chromium at 375 px with axe on every
 * page: a file too large (413), of a refused type (415) or whose bytes are not its type (422) is
 * told on the form and no dispute is made; a real one is kept, listed on the dispute's page and
 * downloaded as an attachment by its customer only; a multipart form without the session's
 * CSRF token is refused. A verified guest with two accounts chooses which one to dispute.
 */
import type { Browser, Page, Response } from 'playwright-core';
import { launchBrowser, seriousViolations } from '../support/browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { customerWithAccount, newDebtAccount, newSession, unique, uniquePhone } from '../support/fixtures';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';
import { organizationQuery } from '../portal-logins/portal-guest';

jest.setTimeout(120_000);

let app: TestApp;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  browser = await launchBrowser();
  page = await (await browser.newContext({ viewport: { width: 375, height: 812 }, acceptDownloads: true })).newPage();
  await page.route('**/*', (route) => (route.request().url().startsWith(app.origin) ? route.continue() : route.abort('blockedbyclient')));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

async function axe(name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

/** A PNG's signature and a header chunk: what its first bytes must be. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('0000000d49484452000000010000000108060000001f15c489', 'hex')]);
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');

const disputesOf = async (accountId: string) => (await app.sandbox.GET('/disputes', { params: { query: { debt_account_id: accountId } } })).data!.data;

/** Sends the form and answers the POST's response (the page it rendered, or the redirect). */
async function send(): Promise<Response> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Send my dispute' }).click()]);
  await page.waitForLoadState();
  return response;
}

test('a customer\'s dispute form refuses a bad file on the form (413, 415, 422, nothing made), keeps a real one, and lets only its customer download it', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, { address: { postal_code: '78704' } }, { balance: 30_000, external_account_number: unique('AN') });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_detail' });
  await page.goto(session.portal_url);
  await page.getByRole('link', { name: 'Dispute this debt' }).click();
  await page.getByRole('heading', { name: 'Dispute this debt' }).waitFor();
  await axe('form with a file');

  await page.getByLabel('The amount is wrong').check();
  await page.getByLabel('Details (optional)').fill('The fee of $45 was never agreed.');
  const file = page.getByLabel('A document (optional)');

  // A script named .pdf: the browser declares a PDF, the bytes say otherwise.
  await file.setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: Buffer.from('<script>alert(1)</script>') });
  expect((await send()).status()).toBe(422);
  expect(await page.getByRole('alert').textContent()).toBe('Your dispute was not sent: This file is not what its name says: its content is not a PDF, PNG or JPEG. Attach the document itself.');
  expect(await page.getByLabel('The amount is wrong').isChecked()).toBe(true);
  expect(await page.getByLabel('Details (optional)').inputValue()).toBe('The fee of $45 was never agreed.');
  await axe('form refusing a spoofed file');
  await page.screenshot({ path: '/tmp/d25-form-refused.png', fullPage: true });

  await file.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('my notes') });
  expect((await send()).status()).toBe(415);
  expect(await page.getByRole('alert').textContent()).toMatch(/Attach a PDF, a PNG or a JPEG file/);

  await file.setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024, 0x20)]) });
  expect((await send()).status()).toBe(413);
  expect(await page.getByRole('alert').textContent()).toMatch(/larger than 10 MB/);
  // The fields before the file were read: what was typed is still there.
  expect(await page.getByLabel('The amount is wrong').isChecked()).toBe(true);
  expect(await disputesOf(account.id)).toEqual([]);

  await file.setInputFiles({ name: 'bank statement (Jan).png', mimeType: 'image/png', buffer: PNG });
  const filed = await send();
  expect(filed.status()).toBe(303);
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  const link = page.getByRole('link', { name: 'bank statement (Jan).png' });
  expect(await link.count()).toBe(1);
  await axe('dispute page with a file');
  await page.screenshot({ path: '/tmp/d25-dispute-with-file.png', fullPage: true });

  const [dispute] = await disputesOf(account.id);
  expect(dispute).toMatchObject({ source: 'portal', reason: 'wrong_amount', has_documents: true, files: [{ name: 'bank statement (Jan).png', content_type: 'image/png', size: PNG.length }] });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  expect(download.suggestedFilename()).toBe('bank_statement__Jan_.png');
  const answer = await page.request.get(`${app.origin}/portal/disputes/${dispute!.id}/files/${dispute!.files[0]!.id}`);
  expect(answer.status()).toBe(200);
  expect(answer.headers()['content-disposition']).toBe('attachment; filename="bank_statement__Jan_.png"');
  expect(answer.headers()['content-type']).toBe('image/png');
  expect((await answer.body()).equals(PNG)).toBe(true);
  const [created] = await outboxEvents(app, 'debt-account-dispute.create', dispute!.id);
  expect(created).toMatchObject({ has_documents: true, files: [{ name: 'bank statement (Jan).png' }] });

  // Another customer's dispute file, and a file id of another dispute: not found.
  const other = await customerWithAccount(app.sandbox, {}, { balance: 5_000 });
  const theirs = (await app.sandbox.POST('/debt-accounts/{id}/disputes', { params: { path: { id: other.account.id } }, body: { reason: 'not_mine' } })).data!.data;
  const form = new FormData();
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'theirs.pdf');
  const upload = await fetch(`${app.baseUrl}/disputes/${theirs.id}/files`, { method: 'POST', body: form, headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
  const theirFile = ((await upload.json()) as { data: { files: { id: string }[] } }).data.files[0]!.id;
  expect((await page.request.get(`${app.origin}/portal/disputes/${theirs.id}/files/${theirFile}`)).status()).toBe(404);
  expect((await page.request.get(`${app.origin}/portal/disputes/${dispute!.id}/files/${theirFile}`)).status()).toBe(404);

  // A multipart form without this browser session's token is refused, and makes nothing.
  const second = await newDebtAccount(app.sandbox, customer.id, { external_id: unique('ACC'), balance: 2_000 });
  const forged = await page.request.post(`${app.origin}/portal/accounts/${second.id}/dispute`, {
    multipart: { _csrf: 'not-the-token', reason: 'not_mine', file: { name: 'a.pdf', mimeType: 'application/pdf', buffer: PDF } },
  });
  expect(forged.status()).toBe(403);
  expect(await disputesOf(second.id)).toEqual([]);
});

test('a verified guest with two accounts chooses which one to dispute, and files it with a document', async () => {
  const phone = uniquePhone('737');
  const { customer, account: oldest } = await customerWithAccount(
    app.sandbox,
    { ssn_last4: '5120', phone, address: { postal_code: '78701', line1: '4 Lamar Blvd', city: 'Austin', state: 'TX' } },
    { balance: 21_000, external_account_number: unique('OLD') },
  );
  const newer = await newDebtAccount(app.sandbox, customer.id, { external_id: unique('ACC'), balance: 8_450, external_account_number: unique('NEW') });
  await page.context().clearCookies();

  await page.goto(`${app.origin}/portal/?${organizationQuery(app)}`);
  await page.getByRole('link', { name: 'Dispute a debt' }).click();
  await page.getByLabel('Phone').fill(phone);
  await page.getByLabel('Last 4 of SSN').fill('5120');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Which debt do you dispute?' }).waitFor();
  expect(await page.getByRole('heading', { level: 2 }).allTextContents()).toEqual([`Account ${oldest.external_account_number}`, `Account ${newer.external_account_number}`]);
  expect(await page.getByText('$84.50').count()).toBe(1);
  await axe('guest account choice');
  await page.screenshot({ path: '/tmp/d25-guest-choice.png', fullPage: true });

  await page.getByRole('link', { name: `Dispute this debt (account ${newer.external_account_number})` }).click();
  await page.getByRole('heading', { name: 'Dispute this debt' }).waitFor();
  expect(await page.getByText(`Account ${newer.external_account_number}.`).count()).toBe(1);
  await page.getByLabel('This is not my debt').check();
  await page.getByLabel('A document (optional)').setInputFiles({ name: 'police-report.pdf', mimeType: 'application/pdf', buffer: PDF });
  expect((await send()).status()).toBe(303);
  await page.getByRole('heading', { name: 'Your dispute' }).waitFor();
  expect(await page.getByRole('link', { name: 'police-report.pdf' }).count()).toBe(1);
  await axe('guest dispute page');

  expect(await disputesOf(oldest.id)).toEqual([]);
  const [dispute] = await disputesOf(newer.id);
  expect(dispute).toMatchObject({ source: 'guest', reason: 'not_mine', in_writing: true, hold: true, files: [{ name: 'police-report.pdf' }] });
  const created = await outboxEvents(app, 'guest.dispute.created', (data) => data.trackables?.debt_account?.uuid === newer.id);
  expect(created).toHaveLength(1);

  // Back at the choice: the disputed account leads to its dispute, the other can still be disputed.
  await page.goto(`${app.origin}/portal/dispute-a-debt/accounts`);
  await page.getByRole('link', { name: `See your dispute of account ${newer.external_account_number}` }).click();
  expect(new URL(page.url()).pathname).toBe(`/portal/disputes/${dispute!.id}`);
  await page.goto(`${app.origin}/portal/dispute-a-debt/accounts`);
  expect(await page.getByRole('link', { name: `Dispute this debt (account ${oldest.external_account_number})` }).count()).toBe(1);
  // Another customer's account is not the guest's to dispute.
  const stranger = await customerWithAccount(app.sandbox, {}, { balance: 1_000 });
  expect((await page.goto(`${app.origin}/portal/dispute-a-debt/accounts/${stranger.account.id}`))!.status()).toBe(404);
});
