/**
 * Documents as a person meets them in the Portal, in Chromium (one browser for the file, one
 * page reused), axe on every page: a document read, one signed on the account's documents, and
 * a checkout held until its document is signed, then paid — both events once, after the payment.
 */
import type { Page } from 'playwright-core';
import { seriousViolations } from '../support/browser';
import { startPortalInChromium, type PortalInChromium } from '../support/portal-chromium';
import type { TestApp } from '../support/test-app';
import { customerWithAccount, newSession } from '../support/fixtures';
import { outboxEvents } from '../support/webhooks';

jest.setTimeout(90_000);

let portal: PortalInChromium;
let app: TestApp;
let page: Page;

beforeAll(async () => {
  ({ app, page } = portal = await startPortalInChromium({ webhookAllowInsecureUrls: true }));
}, 120_000);

afterAll(() => portal?.stop());

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');

async function addDocument(accountId: string, fields: Record<string, string>): Promise<string> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([PDF], { type: 'application/pdf' }), 'document.pdf');
  const response = await fetch(`${app.baseUrl}/debt-accounts/${accountId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.sandbox_token}` }, body: form });
  expect(response.status).toBe(201);
  return ((await response.json()) as { data: { id: string } }).data.id;
}

const documentOf = async (id: string) => (await app.sandbox.GET('/documents/{id}', { params: { path: { id } } })).data!.data;

async function axe(name: string): Promise<void> {
  expect(await seriousViolations(page, name)).toEqual([]);
}

async function signAs(name: string): Promise<void> {
  await page.getByRole('checkbox', { name: 'I agree to sign electronically' }).check();
  await page.getByLabel('Type your full name to sign').fill(name);
  await page.getByRole('button', { name: 'Sign', exact: true }).click();
}

test('a document read, then one signed on the account\'s documents (the consent box first)', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox);
  const toRead = await addDocument(account.id, { name: 'Itemization of the debt', description: 'What you owe and why <b>now</b>.' });
  const toSign = await addDocument(account.id, { name: 'Settlement agreement', signature_required: 'true' });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_documents' });
  await page.context().clearCookies();
  await page.goto(session.portal_url);
  await page.getByRole('heading', { name: 'Documents' }).waitFor();
  expect(await page.getByText('What you owe and why <b>now</b>.').count()).toBe(1);
  await axe('documents');

  await page.getByRole('link', { name: 'Open Itemization of the debt' }).click();
  await page.getByRole('heading', { name: 'Itemization of the debt' }).waitFor();
  expect(await page.getByRole('link', { name: 'Read the document (PDF)' }).getAttribute('href')).toMatch(new RegExp(`/documents/${toRead}/file$`));
  expect(await page.getByRole('button', { name: 'Sign', exact: true }).count()).toBe(0);
  await axe('document-read');
  expect(await documentOf(toRead)).toMatchObject({ status: 'viewed', viewed_at: expect.any(String) });

  await page.getByRole('link', { name: 'All documents' }).click();
  await page.getByRole('link', { name: 'Read and sign Settlement agreement' }).click();
  await page.getByLabel('Type your full name to sign').fill('Maria Gonzalez');
  await page.getByRole('button', { name: 'Sign', exact: true }).click();
  expect(await page.getByText('Tick "I agree to sign electronically" to sign.').innerText()).toBeTruthy();
  await axe('document-sign-refused');
  expect((await documentOf(toSign)).signatures).toEqual([]);

  await signAs('Maria Gonzalez');
  await page.getByRole('status').waitFor();
  expect(await page.getByRole('status').innerText()).toContain('you signed “Settlement agreement”');
  await axe('documents-signed');
  expect((await documentOf(toSign)).signature).toMatchObject({ signer_name: 'Maria Gonzalez', context: 'account_documents' });
  expect(await outboxEvents(app, 'signature-document.signed', toSign)).toHaveLength(1);
});

test('a checkout waits for its document: signed there, then paid; both events once, after the payment', async () => {
  const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 20000 });
  const agreement = await addDocument(account.id, { name: 'Payment agreement', signature_required: 'true', contexts: 'checkout' });
  const session = await newSession(app.sandbox, { customer_id: customer.id, debt_account_id: account.id, destination: 'account_checkout' });
  await page.context().clearCookies();
  await page.goto(session.portal_url);
  await page.getByRole('heading', { name: 'Make a payment' }).waitFor();
  expect(await page.getByRole('button', { name: 'Pay now' }).isDisabled()).toBe(true);
  await axe('checkout-unsigned');

  await page.getByRole('link', { name: 'Read and sign “Payment agreement”' }).click();
  await signAs('Maria Gonzalez');
  await page.getByRole('heading', { name: 'Make a payment' }).waitFor();
  expect(await outboxEvents(app, 'signature-document.signed', agreement)).toEqual([]);
  expect(await outboxEvents(app, 'customer.document.signed', (data) => data.trackables?.debt_account?.uuid === account.id)).toEqual([]);

  await page.getByLabel('The full balance, $200.00').check();
  await page.getByLabel('A new card').check();
  await page.getByLabel('Name on card').fill('Maria Gonzalez');
  await page.getByLabel('Card number').fill('4242424242424242');
  await page.getByLabel('Expiry month (MM)').fill('08');
  await page.getByLabel('Expiry year (YY)').fill('39');
  await page.getByLabel('Security code').fill('123');
  await page.getByRole('checkbox', { name: /payment policy/ }).check();
  await page.getByRole('button', { name: 'Pay now' }).click();
  await page.getByRole('heading', { name: 'Thank you' }).waitFor();

  const signed = await outboxEvents(app, 'signature-document.signed', agreement);
  const tracked = await outboxEvents(app, 'customer.document.signed', (data) => data.trackables?.debt_account?.uuid === account.id);
  expect(signed).toHaveLength(1);
  expect(tracked).toHaveLength(1);
  const paid = await outboxEvents(app, 'charge.succeeded', (data) => data.debt_account?.id === account.id);
  const order = await app.db('webhook_events').whereIn('name', ['charge.succeeded', 'signature-document.signed']).orderBy('sequence').pluck('name');
  expect(paid).toHaveLength(1);
  expect(order.lastIndexOf('signature-document.signed')).toBeGreaterThan(order.lastIndexOf('charge.succeeded'));
});
