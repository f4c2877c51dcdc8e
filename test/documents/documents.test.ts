/**
 * Documents through the API (files checked by their bytes, statuses, voiding, the account's
 * `documents`), and signing them in the Portal over plain HTTP (the audit record, the consent
 * box, the checkout gate and when the two events fire). What a person sees: documents-portal.test.ts.
 */
import { createHash } from 'node:crypto';
import { CARD_YEAR, customerWithAccount, expectFieldError, newSession, UNKNOWN_UUID, unique } from '../support/fixtures';
import { openPortal, type PortalBrowser } from '../support/portal-browser';
import { startTestApp, type TestApp } from '../support/test-app';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';
import { MAX_UPLOAD_BYTES } from '../../server/http/uploads';
import { CURRENT_CONSENT } from '../../server/documents/esign-consent';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
});
afterAll(async () => app?.stop());

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

interface Parts {
  file?: { bytes: Buffer; type?: string } | null;
  fields?: Record<string, string | string[]>;
  token?: string;
}

/** POST /debt-accounts/{id}/documents as multipart, as an integrator's HTTP library sends it. */
async function upload(accountId: string, { file = { bytes: PDF }, fields = { name: 'Settlement agreement' }, token = app.organization.sandbox_token }: Parts = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
  if (file) form.append('file', new Blob([file.bytes], { type: file.type ?? 'application/pdf' }), 'agreement.pdf');
  const response = await fetch(`${app.baseUrl}/debt-accounts/${accountId}/documents`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const getDocument = async (id: string) => (await app.sandbox.GET('/documents/{id}', { params: { path: { id } } })).data!.data;

async function portalOf(customerId: string, accountId: string): Promise<PortalBrowser> {
  const session = await newSession(app.sandbox, { customer_id: customerId, debt_account_id: accountId });
  return openPortal(app.config.portalUrl, session.portal_url);
}

/** Posts the sign form of a document as the page's form does. */
async function sign(browser: PortalBrowser, accountId: string, documentId: string, fields: Record<string, string>) {
  const body = new URLSearchParams({ _csrf: browser.csrf, consent_version: CURRENT_CONSENT.version, context: 'account_documents', ...fields });
  const response = await fetch(`${app.config.portalUrl}/accounts/${accountId}/documents/${documentId}/sign`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Test Browser/1.0' },
    body: body.toString(),
  });
  return { status: response.status, location: response.headers.get('location'), html: await response.text() };
}

/** The Portal's path (PORTAL_URL's), which the pages' redirects start with. */
const portalPath = () => new URL(app.config.portalUrl).pathname.replace(/\/$/, '');

const openPage = (browser: PortalBrowser, path: string) => fetch(`${app.config.portalUrl}${path}`, { headers: { cookie: browser.cookie } });

describe('POST /debt-accounts/{id}/documents', () => {
  test('a PDF to read is kept with its hash, listed on the account, and given back as an attachment of ours', async () => {
    const { account } = await customerWithAccount(app.sandbox);
    const externalId = unique('DOC');
    const made = await upload(account.id, { fields: { name: 'Itemization of the debt', description: '<b>Your</b> statement', external_id: externalId } });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({
      name: 'Itemization of the debt',
      description: '<b>Your</b> statement',
      external_id: externalId,
      status: 'shared',
      signature_required: false,
      contexts: ['account_documents'],
      debt_account: { id: account.id, external_id: account.external_id },
      file: { content_type: 'application/pdf', size: PDF.length, sha256: sha256(PDF) },
      viewed_at: null,
      signature: null,
      signatures: [],
    });
    expect((await getDocument(externalId)).id).toBe(made.body.data.id);
    const read = (await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } })).data!.data;
    expect(read.documents).toEqual([{ id: made.body.data.id, name: 'Itemization of the debt', created_at: made.body.data.created_at }]);

    const file = await fetch(`${app.baseUrl}/documents/${made.body.data.id}/file`, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="document-${made.body.data.id}.pdf"`);
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(file.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(Buffer.from(await file.arrayBuffer()).equals(PDF)).toBe(true);

    const [update] = (await outboxEvents(app, 'debt-account.update', account.id)).slice(-1);
    expect(update!.documents).toEqual([{ id: made.body.data.id, name: 'Itemization of the debt', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) }]);
  });

  test('a document to sign starts pending, in the contexts named one part each', async () => {
    const { account } = await customerWithAccount(app.sandbox);
    const made = await upload(account.id, { fields: { name: 'Agreement', signature_required: 'true', contexts: ['account_documents', 'checkout'] } });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ status: 'pending', signature_required: true, contexts: ['account_documents', 'checkout'] });
  });

  test('bad input is refused in the spec shape and keeps nothing', async () => {
    const { account } = await customerWithAccount(app.sandbox);
    const before = (await app.sandbox.GET('/documents', { params: { query: { debt_account_id: account.id } } })).data!.meta.total;
    const html = Buffer.from('<html><script>alert(1)</script></html>');
    expect((await upload(account.id, { file: { bytes: html, type: 'text/html' } })).status).toBe(415);
    const renamed = await upload(account.id, { file: { bytes: html } });
    expect(renamed.status).toBe(422);
    expectFieldError(renamed.body, 'file');
    expectFieldError((await upload(account.id, { file: null })).body, 'file');
    expectFieldError((await upload(account.id, { fields: { name: '   ' } })).body, 'name');
    expectFieldError((await upload(account.id, { fields: { name: 'x'.repeat(256) } })).body, 'name');
    expect((await upload(account.id, { fields: { name: 'x'.repeat(255) } })).status).toBe(201);
    expectFieldError((await upload(account.id, { fields: { name: 'A', signature_required: 'yes' } })).body, 'signature_required');
    expectFieldError((await upload(account.id, { fields: { name: 'A', contexts: 'portal' } })).body, 'contexts');
    expectFieldError((await upload(account.id, { fields: { name: 'A', contexts: ['checkout', 'checkout'], signature_required: 'true' } })).body, 'contexts');
    expectFieldError((await upload(account.id, { fields: { name: 'A', contexts: 'checkout' } })).body, 'contexts');
    const taken = unique('DOC');
    expect((await upload(account.id, { fields: { name: 'A', external_id: taken } })).status).toBe(201);
    expectFieldError((await upload(account.id, { fields: { name: 'B', external_id: taken } })).body, 'external_id');
    expect((await upload(UNKNOWN_UUID)).status).toBe(404);
    expect((await upload(account.id, { token: app.organization.production_token })).status).toBe(404);
    const after = (await app.sandbox.GET('/documents', { params: { query: { debt_account_id: account.id } } })).data!.meta.total;
    expect(after - before).toBe(2);
  });

  test('a file of exactly 10 MB is kept and one byte more is a 413', async () => {
    const { account } = await customerWithAccount(app.sandbox);
    const limit = Buffer.concat([PDF, Buffer.alloc(MAX_UPLOAD_BYTES - PDF.length, 0x20)]);
    expect((await upload(account.id, { file: { bytes: limit } })).status).toBe(201);
    const over = await upload(account.id, { file: { bytes: Buffer.concat([limit, Buffer.from(' ')]) } });
    expect(over).toMatchObject({ status: 413, body: { errorCode: 'payload_too_large' } });
  });
});

describe('GET /documents and DELETE /documents/{id}', () => {
  test('lists newest first with its filters; voids an unsigned document once; another tenant sees none', async () => {
    const { account } = await customerWithAccount(app.sandbox);
    const first = (await upload(account.id, { fields: { name: 'First' } })).body.data;
    app.clock.advance(1000);
    const second = (await upload(account.id, { fields: { name: 'Second', signature_required: 'true' } })).body.data;
    const listed = (await app.sandbox.GET('/documents', { params: { query: { debt_account_id: account.external_id! } } })).data!;
    expect(listed.data.map((document) => document.name)).toEqual(['Second', 'First']);
    const pending = (await app.sandbox.GET('/documents', { params: { query: { debt_account_id: account.id, status: 'pending' } } })).data!;
    expect(pending.data.map((document) => document.id)).toEqual([second.id]);
    const badStatus = await app.sandbox.GET('/documents', { params: { query: { status: 'lost' as never } } });
    expectFieldError(badStatus.error, 'query.status');

    expect((await app.api.GET('/documents/{id}', { params: { path: { id: first.id } } })).response.status).toBe(404);
    expect((await app.api.DELETE('/documents/{id}', { params: { path: { id: first.id } } })).response.status).toBe(404);

    expect((await app.sandbox.DELETE('/documents/{id}', { params: { path: { id: first.id } } })).data).toEqual({ success: true });
    expect((await getDocument(first.id)).status).toBe('voided');
    expect((await app.sandbox.DELETE('/documents/{id}', { params: { path: { id: first.id } } })).response.status).toBe(409);
    const read = (await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } })).data!.data;
    expect(read.documents!.map((document) => document.id)).toEqual([second.id]);
  });
});

describe('signing in the Portal', () => {
  test('opening records viewed_at; a signature without the consent box or a name is a 422 that records nothing; then the audit record and both events once', async () => {
    const { customer, account } = await customerWithAccount(app.sandbox);
    const document = (await upload(account.id, { fields: { name: 'Settlement agreement', signature_required: 'true' } })).body.data;
    const browser = await portalOf(customer.id, account.id);

    const page = await openPage(browser, `/accounts/${account.id}/documents/${document.id}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Type your full name to sign');
    const viewed = await getDocument(document.id);
    expect(viewed.status).toBe('viewed');
    expect(viewed.viewed_at).not.toBeNull();

    const noConsent = await sign(browser, account.id, document.id, { signer_name: 'Maria Gonzalez' });
    expect(noConsent.status).toBe(422);
    expect(noConsent.html).toContain('Tick &quot;I agree to sign electronically&quot; to sign.');
    expect((await sign(browser, account.id, document.id, { signer_name: '  ', consent: 'yes' })).status).toBe(422);
    expect((await sign(browser, account.id, document.id, { signer_name: 'M'.repeat(256), consent: 'yes' })).status).toBe(422);
    expect((await sign(browser, account.id, document.id, { signer_name: 'Maria', consent: 'yes', consent_version: 'esign-1999' })).status).toBe(422);
    expect((await getDocument(document.id)).signatures).toEqual([]);
    expect(await outboxEvents(app, 'signature-document.signed', document.id)).toEqual([]);

    const signed = await sign(browser, account.id, document.id, { signer_name: ' Maria Gonzalez ', consent: 'yes' });
    expect(signed).toMatchObject({ status: 303, location: `${portalPath()}/accounts/${account.id}/documents?signed=${document.id}` });
    const after = await getDocument(document.id);
    expect(after.status).toBe('signed');
    expect(after.signature).toEqual({
      id: expect.any(String),
      context: 'account_documents',
      signer_name: 'Maria Gonzalez',
      signed_at: after.signed_at,
      ip_address: expect.stringMatching(/127\.0\.0\.1/),
      user_agent: 'Test Browser/1.0',
      consent_version: CURRENT_CONSENT.version,
      file_sha256: sha256(PDF),
      confirmed_at: after.signed_at,
    });
    expect(await outboxEvents(app, 'signature-document.signed', document.id)).toEqual([
      expect.objectContaining({ id: document.id, status: 'signed', contexts: ['account_documents'], debt_account: { id: account.id, external_id: account.external_id } }),
    ]);
    const tracked = await outboxEvents(app, 'customer.document.signed', (data) => data.trackables?.debt_account?.uuid === account.id);
    expect(tracked).toHaveLength(1);

    expect((await sign(browser, account.id, document.id, { signer_name: 'Maria Gonzalez', consent: 'yes' })).status).toBe(409);
    expect((await app.sandbox.DELETE('/documents/{id}', { params: { path: { id: document.id } } })).response.status).toBe(409);
  });

  test("another customer's document, or a voided one, is a 404 page", async () => {
    const mine = await customerWithAccount(app.sandbox);
    const theirs = await customerWithAccount(app.sandbox);
    const document = (await upload(theirs.account.id, { fields: { name: 'Theirs', signature_required: 'true' } })).body.data;
    const browser = await portalOf(mine.customer.id, mine.account.id);
    expect((await openPage(browser, `/accounts/${theirs.account.id}/documents/${document.id}`)).status).toBe(404);
    expect((await sign(browser, theirs.account.id, document.id, { signer_name: 'Maria Gonzalez', consent: 'yes' })).status).toBe(404);
    const voided = (await upload(mine.account.id, { fields: { name: 'Gone' } })).body.data;
    await app.sandbox.DELETE('/documents/{id}', { params: { path: { id: voided.id } } });
    expect((await openPage(browser, `/accounts/${mine.account.id}/documents/${voided.id}`)).status).toBe(404);
    expect((await getDocument(document.id)).viewed_at).toBeNull();
  });

  test('a checkout document blocks the payment until signed there; its events fire once, with the payment', async () => {
    const { customer, account } = await customerWithAccount(app.sandbox, {}, { balance: 5000 });
    const document = (await upload(account.id, { fields: { name: 'Payment agreement', signature_required: 'true', contexts: 'checkout' } })).body.data;
    const browser = await portalOf(customer.id, account.id);
    const card = { choice: 'partial', amount: '10.00', method: 'card', card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_exp_month: '08', card_exp_year: String(CARD_YEAR), card_cvc: '123', card_zip: '78704' };

    const blocked = await browser.payByForm(account.id, card);
    expect(blocked.status).toBe(409);
    expect((await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } })).data!.data.current_balance).toBe(5000);

    const signed = await sign(browser, account.id, document.id, { signer_name: 'Maria Gonzalez', consent: 'yes', context: 'checkout' });
    expect(signed).toMatchObject({ status: 303, location: `${portalPath()}/accounts/${account.id}/checkout` });
    expect((await getDocument(document.id)).signature).toMatchObject({ context: 'checkout', confirmed_at: null });
    expect(await outboxEvents(app, 'signature-document.signed', document.id)).toEqual([]);

    expect((await browser.payByForm(account.id, card)).status).toBe(303);
    const told = await outboxEvents(app, 'signature-document.signed', document.id);
    expect(told).toHaveLength(1);
    const confirmedAt = (await getDocument(document.id)).signature!.confirmed_at!;
    expect(told[0]!.signed_at).toBe(confirmedAt.slice(0, 19).replace('T', ' '));
    expect(await outboxEvents(app, 'customer.document.signed', (data) => data.trackables?.debt_account?.uuid === account.id)).toHaveLength(1);

    expect((await browser.payByForm(account.id, { ...card, amount: '5.00' })).status).toBe(303);
    expect(await outboxEvents(app, 'signature-document.signed', document.id)).toHaveLength(1);
  });
});
