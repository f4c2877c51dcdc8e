/**
 * GET /debt-accounts/{id} reads the account and its relations in one statement
 * (debt-accounts/debt-account-read.ts); the list reads them a statement per relation
 * (debt-account-loader.ts). Both must show an account the same way, to the byte: every relation
 * filled (locations, plan, customer, more charges and transactions than are embedded, an
 * external charge, autopay, documents, a dispute with a comment, a parent), under every include.
 */
import type { Schemas } from '../../client';
import { accountWithCard, newDebtAccount, unique, UNKNOWN_UUID } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let full: Schemas['DebtAccount'];
let child: Schemas['DebtAccount'];
let bare: Schemas['DebtAccount'];

beforeAll(async () => {
  app = await startTestApp();
  const api = app.sandbox;
  const { customer, account, methodId } = await accountWithCard(api, 500_000, {
    locations: [
      { name: 'Summit Recovery Partners', external_id: unique('LOC'), type: 'product_type' },
      { name: 'Harbor Billing', external_id: unique('LOC') },
    ],
    billing_type: ['payment-plan', 'partial-payment', 'full-amount-payment'],
    payment_plan: { frequency: 'monthly', start_date: '2099-12-01', amount: 15000 },
    metadata: { portfolio: 'spring-2026' },
    rules: { min_payment_amount: 100 },
    validation_notice_sent_at: '2020-01-02',
  });
  // More charges than an account embeds (10): the newest ten are shown, in both reads.
  for (let i = 0; i < 11; i++) {
    const { response, error } = await api.POST('/charges', { body: { amount: 100 + i, debt_account_id: account.id, payment_method_id: methodId, metadata: { n: String(i) } } });
    expect([response.status, error]).toEqual([201, undefined]);
  }
  expect((await api.POST('/external-charges', { body: { debt_account_id: account.id, amount: 2_500, paid_at: '2026-01-05', method: 'cash' } })).response.status).toBe(201);
  const tenant = { organization_id: app.organization.organization_id, environment: 'sandbox' };
  await app.db('autopays').insert({ ...tenant, debt_account_id: account.id, customer_id: customer.id, payment_method_id: methodId, amount_type: 'custom', amount: 5_000, day_of_month: 15, next_run_at: new Date('2099-01-15T14:00:00.123Z') });
  // Documents as an integrator uploads them; a voided one is not shown.
  const uploaded: string[] = [];
  for (const name of ['Settlement agreement', 'Voided notice', 'Itemization']) {
    const form = new FormData();
    form.append('name', name);
    form.append('file', new Blob([Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1')], { type: 'application/pdf' }), 'document.pdf');
    const response = await fetch(`${app.baseUrl}/debt-accounts/${account.id}/documents`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.sandbox_token}` }, body: form });
    expect(response.status).toBe(201);
    uploaded.push(((await response.json()) as { data: { id: string } }).data.id);
  }
  expect((await api.DELETE('/documents/{id}', { params: { path: { id: uploaded[1]! } } })).response.status).toBe(200);
  const dispute = (await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: account.id } }, body: { reason: 'wrong_amount', details: 'Paid in March' } })).data!.data;
  await api.POST('/disputes/{id}/comments', { params: { path: { id: dispute.id } }, body: { comment: 'We asked the hospital.', author: { name: 'Dana Whitfield', title: 'Disputes agent' } } });
  full = account;

  const parent = await newDebtAccount(api, customer.id, { external_id: unique('PARENT'), balance: 0 });
  child = await newDebtAccount(api, customer.id, { external_id: unique('CHILD'), parent_external_id: parent.external_id!, balance: 7_000 });
  bare = await newDebtAccount(api, (await accountWithCard(api)).customer.id, { external_id: unique('BARE') });
});
afterAll(async () => app?.stop());

async function one(key: string, include?: string) {
  const { data, response } = await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: key }, query: include === undefined ? {} : { include } } as never });
  expect(response.status).toBe(200);
  return data!.data;
}

async function listed(id: string, include?: string) {
  const { data, response } = await app.sandbox.GET('/debt-accounts', { params: { query: { limit: 500, ...(include === undefined ? {} : { include }) } } as never });
  expect(response.status).toBe(200);
  return data!.data.find((account) => account.id === id);
}

const INCLUDES = [undefined, 'customer', 'location', 'locations', 'metadata', 'customer,location,locations,metadata'];

test.each(INCLUDES)('an account with every relation reads as the list shows it (include %s)', async (include) => {
  const read = await one(full.id, include);
  expect(read).toEqual(await listed(full.id, include));
  // The relations are really there, so the comparison compares something.
  expect(read.charges).toHaveLength(10);
  expect(read.transactions).toHaveLength(10);
  expect(read.payment_plan).not.toBeNull();
  expect(read.autopay).toMatchObject({ amount: 5_000, day_of_month: 15, next_run_at: '2099-01-15T14:00:00.123Z' });
  // (Uploaded within one tick of the sandbox clock, they may share created_at: then the order is by id.)
  expect(read.documents!.map((document) => document.name).sort()).toEqual(['Itemization', 'Settlement agreement']);
  expect(read.disputes[0]).toMatchObject({ reason: 'wrong_amount' });
  expect(read.active_dispute).not.toBeNull();
  if (include === undefined || include.includes('locations')) expect(read.locations).toHaveLength(2);
  if (include === undefined || include.includes('customer')) expect(read.customer?.name).toBe('Maria Gonzalez');
});

test.each(INCLUDES)('a child and an account with no relations read as the list shows them (include %s)', async (include) => {
  const readChild = await one(child.id, include);
  expect(readChild.parent_external_id).not.toBeNull();
  expect(readChild).toEqual(await listed(child.id, include));
  const readBare = await one(bare.id, include);
  expect(readBare).toMatchObject({ charges: [], transactions: [], documents: [], disputes: [], payment_plan: null, autopay: null });
  expect(readBare).toEqual(await listed(bare.id, include));
});

test('by external_id it is the same account; an unknown key or another tenant\'s account is a 404', async () => {
  expect(await one(full.external_id!)).toEqual(await one(full.id));
  for (const key of [UNKNOWN_UUID, 'NO-SUCH-ACCOUNT']) {
    const { response, error } = await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: key } } });
    expect(response.status).toBe(404);
    expect((error as unknown as { errorCode: string }).errorCode).toBe('not_found');
  }
  expect((await app.other.GET('/debt-accounts/{id}', { params: { path: { id: full.id } } })).response.status).toBe(404);
  expect((await app.api.GET('/debt-accounts/{id}', { params: { path: { id: full.id } } })).response.status).toBe(404);
});

test('an account whose external_id is another account\'s id reads as the account with that id', async () => {
  // (As debtAccountRepo.find: a UUID is an id first.)
  const { customer } = await accountWithCard(app.sandbox);
  const lookalike = await newDebtAccount(app.sandbox, customer.id, { external_id: bare.id });
  expect((await one(bare.id)).id).toBe(bare.id);
  expect(lookalike.external_id).toBe(bare.id);
});
