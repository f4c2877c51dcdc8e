/**
 * Disputes through the API: statuses and their moves, the thread, files, bad input, the hold
 * across charges, plans, scheduled charges and parent/child, both hold policies, and the events
 * (checked against the document).
 */
import type { ApiClient, Schemas } from '../../client';
import type { TestApp } from '../support/test-app';
import { newCustomer, newDebtAccount, testCard, unique, UNKNOWN_UUID } from '../support/fixtures';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import { advanceSandbox, sandboxDayAfter } from '../support/sandbox-clock';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');

async function payer(balance = 40_000, account: Partial<Schemas['DebtAccountCreate']> = {}) {
  const customer = await newCustomer(api, { address: { line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX', postal_code: '78704' } } as never);
  const created = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance, ...account });
  const { data } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } });
  return { customer, account: created, methodId: data!.data.id };
}

async function dispute(accountId: string, body: Partial<Schemas['DisputeCreate']> = {}, client = api) {
  return client.POST('/debt-accounts/{id}/disputes', { params: { path: { id: accountId } }, body: { reason: 'wrong_amount', ...body } });
}

const move = (id: string, status: Schemas['DisputeStatus']) => api.PUT('/disputes/{id}', { params: { path: { id } }, body: { status } });
const charge = (accountId: string, methodId: string, amount = 1_000) => api.POST('/charges', { body: { debt_account_id: accountId, payment_method_id: methodId, amount } });

async function upload(id: string, bytes: Buffer, type: string, name = 'receipt.pdf') {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const response = await fetch(`${app.baseUrl}/disputes/${id}/files`, { method: 'POST', body: form, headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
  return { status: response.status, body: (await response.json()) as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('POST /debt-accounts/{id}/disputes', () => {
  test('records a pending dispute with the contact fields of the customer, holding the account', async () => {
    const { customer, account } = await payer();
    const { data, response } = await dispute(account.external_id!, { details: 'I paid $500 in January.' });
    expect(response.status).toBe(201);
    expect(data!.data).toMatchObject({
      debt_account_id: account.id,
      customer_id: customer.id,
      status: 'pending',
      reason: 'wrong_amount',
      name: customer.name,
      email: customer.email,
      disputed_amount: 40_000,
      in_writing: true,
      within_validation_period: true,
      source: 'api',
      hold: true,
      comments: [],
      files: [],
      resolved_at: null,
    });
    const read = (await api.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } })).data!.data;
    expect(read.active_dispute?.id).toBe(data!.data.id);
    expect(read.disputes.map((d) => d.id)).toEqual([data!.data.id]);
  });

  test('bad input is a 422 on each field and creates nothing; another tenant\'s account is 404', async () => {
    const { account } = await payer(10_000);
    const bad = await dispute(account.id, { reason: 'because' as never, details: 'x'.repeat(5001), disputed_amount: 10_001, zip: '7870' });
    expect(bad.response.status).toBe(422);
    expect(Object.keys((bad.error as { errors: object }).errors).sort()).toEqual(['details', 'reason', 'zip']);
    const tooMuch = await dispute(account.id, { disputed_amount: 10_001, received_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect(tooMuch.response.status).toBe(422);
    expect(Object.keys((tooMuch.error as { errors: object }).errors).sort()).toEqual(['disputed_amount', 'received_at']);
    expect((await dispute(account.id, { details: 'x'.repeat(5000), disputed_amount: 10_000 })).response.status).toBe(201);
    expect((await dispute(account.id, {}, app.other)).response.status).toBe(404);
    expect((await api.GET('/disputes', { params: { query: { debt_account_id: account.id } } })).data!.meta.total).toBe(1);
  });
});

describe('PUT /disputes/{id}: the moves', () => {
  const ALLOWED: [Schemas['DisputeStatus'][], boolean][] = [
    [['under_review'], true],
    [['verified'], true],
    [['resolved'], true],
    [['withdrawn'], true],
    [['under_review', 'verified'], true],
    [['under_review', 'resolved'], true],
    [['under_review', 'withdrawn'], true],
    [['under_review', 'pending'], false],
    [['verified', 'under_review'], false],
    [['verified', 'pending'], false],
    [['resolved', 'verified'], false],
    [['withdrawn', 'under_review'], false],
  ];
  test.each(ALLOWED)('pending → %j: allowed %s', async (path, allowed) => {
    const { account } = await payer(5_000);
    const id = (await dispute(account.id)).data!.data.id;
    for (const [index, status] of path.entries()) {
      const { response, data, error } = await move(id, status);
      const last = index === path.length - 1;
      if (last && !allowed) {
        expect(response.status).toBe(409);
        expect(error).toMatchObject({ errorCode: 'conflict' });
      } else {
        expect(response.status).toBe(200);
        expect(data!.data.status).toBe(status);
        expect(data!.data.hold).toBe(status === 'under_review');
        expect(data!.data.resolved_at === null).toBe(status === 'under_review');
      }
    }
    expect((await api.GET('/disputes/{id}', { params: { path: { id } } })).data!.data.status).toBe(allowed ? path[path.length - 1] : path[path.length - 2]);
  });
});

describe('comments and files', () => {
  test('a comment and a reply make a thread; a reply to another dispute\'s comment is 422', async () => {
    const { account } = await payer(5_000);
    const id = (await dispute(account.id)).data!.data.id;
    const first = await api.POST('/disputes/{id}/comments', { params: { path: { id } }, body: { comment: 'We asked the hospital.', author: { name: 'Dana Whitfield', title: 'Disputes agent' } } });
    expect(first.response.status).toBe(201);
    const commentId = first.data!.data.comments[0]!.id;
    const reply = await api.POST('/disputes/{id}/comments', { params: { path: { id } }, body: { comment: 'They confirmed the payment.', reply_to: commentId, author: { name: 'Dana Whitfield' } } });
    expect(reply.data!.data.comments).toEqual([
      expect.objectContaining({ id: commentId, replies: [expect.objectContaining({ comment: 'They confirmed the payment.', author: { name: 'Dana Whitfield', title: null } })] }),
    ]);
    const replyId = reply.data!.data.comments[0]!.replies[0]!.id;
    const deeper = await api.POST('/disputes/{id}/comments', { params: { path: { id } }, body: { comment: 'x', reply_to: replyId, author: { name: 'A' } } });
    expect(deeper.response.status).toBe(422);
    const other = (await dispute((await payer(5_000)).account.id)).data!.data.id;
    const wrong = await api.POST('/disputes/{id}/comments', { params: { path: { id: other } }, body: { comment: 'x', reply_to: commentId, author: { name: 'A' } } });
    expect(wrong.response.status).toBe(422);
  });

  test('a PDF is kept and served as an attachment; too large 413, a refused type 415, a spoofed type 422, another tenant 404', async () => {
    const { account } = await payer(5_000);
    const id = (await dispute(account.id)).data!.data.id;
    const kept = await upload(id, PDF, 'application/pdf', 'hospital "receipt".pdf');
    expect(kept.status).toBe(201);
    expect(kept.body.data).toMatchObject({ has_documents: true, files: [{ name: 'hospital "receipt".pdf', content_type: 'application/pdf', size: PDF.length }] });
    const download = await fetch(`${app.origin}${kept.body.data.files[0].url}`, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="hospital _receipt_.pdf"');
    expect(download.headers.get('content-type')).toMatch(/^application\/pdf/);
    expect(Buffer.from(await download.arrayBuffer()).equals(PDF)).toBe(true);

    expect((await upload(id, Buffer.alloc(10 * 1024 * 1024 + 1, 0x25), 'application/pdf')).status).toBe(413);
    expect((await upload(id, Buffer.from('<script>alert(1)</script>'), 'text/html')).status).toBe(415);
    expect(await upload(id, Buffer.from('<script>alert(1)</script>'), 'application/pdf')).toMatchObject({ status: 422, body: { errors: { file: [expect.stringMatching(/is not a PDF/)] } } });
    const foreign = await fetch(`${app.baseUrl}/disputes/${id}/files/${kept.body.data.files[0].id}`, { headers: { authorization: `Bearer ${app.organization.production_token}` } });
    expect(foreign.status).toBe(404);
    expect((await fetch(`${app.baseUrl}/disputes/${id}/files/${UNKNOWN_UUID}`, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } })).status).toBe(404);
    expect((await api.GET('/disputes/{id}', { params: { path: { id } } })).data!.data.files).toHaveLength(1);
  });
});

describe('the hold', () => {
  test('POST /charges is 409 account_disputed while held, and charges again once verified', async () => {
    const { account, methodId } = await payer(10_000);
    const id = (await dispute(account.id)).data!.data.id;
    const refused = await charge(account.id, methodId);
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ errorCode: 'account_disputed' });
    await move(id, 'under_review');
    expect((await charge(account.id, methodId)).response.status).toBe(409);
    await move(id, 'verified');
    expect((await charge(account.id, methodId)).response.status).toBe(201);
  });

  test('a plan instalment falling due is skipped, a scheduled charge canceled; after verification the plan charges again', async () => {
    const { account, methodId } = await payer(40_000);
    const start = await sandboxDayAfter(api, 1);
    const plan = (await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'weekly', start_date: start, amount: 10_000 } })).data!.data;
    const scheduled = (await api.POST('/charges', { body: { debt_account_id: account.id, payment_method_id: methodId, amount: 500, scheduled_at: await sandboxDayAfter(api, 2) } })).data!.data;
    const id = (await dispute(account.id)).data!.data.id;
    await advanceSandbox(api, 3);
    const during = (await api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } })).data!.data;
    expect(during.charges.map((c) => c.status)).toEqual(['skipped', 'pending', 'pending', 'pending']);
    expect((await api.GET('/charges/{id}', { params: { path: { id: scheduled.id } } })).data!.data.status).toBe('canceled');
    await move(id, 'verified');
    await advanceSandbox(api, 7);
    const after = (await api.GET('/payment-plans/{id}', { params: { path: { id: plan.id } } })).data!.data;
    expect(after.charges.slice(0, 2).map((c) => c.status)).toEqual(['skipped', 'succeeded']);
    const planEvents = await outboxEvents(app, 'payment-plan.update', (data) => data.id === plan.id);
    expect(planEvents.some((data) => data.charges[0].skipped === true)).toBe(true);
    expect(await outboxEvents(app, 'scheduled-charge.delete', scheduled.id)).toHaveLength(1);
  });

  test('a disputed child holds its parent only as far as its share; the other child takes the payment', async () => {
    const customer = await newCustomer(api);
    const parent = await newDebtAccount(api, customer.id, { external_id: unique('P'), balance: 0 });
    const held = await newDebtAccount(api, customer.id, { external_id: unique('C'), parent_external_id: parent.external_id!, balance: 3_000 });
    const free = await newDebtAccount(api, customer.id, { external_id: unique('C'), parent_external_id: parent.external_id!, balance: 2_000 });
    const methodId = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data.id;
    await dispute(held.id);
    expect(await charge(held.id, methodId)).toMatchObject({ response: { status: 409 } });
    const beyond = await charge(parent.id, methodId, 2_001);
    expect(beyond.response.status).toBe(409);
    expect(beyond.error).toMatchObject({ errorCode: 'account_disputed', error: expect.stringMatching(/at most \$20\.00/) });
    expect((await charge(parent.id, methodId, 2_000)).response.status).toBe(201);
    const balances = async (id: string) => (await api.GET('/debt-accounts/{id}', { params: { path: { id } } })).data!.data.current_balance;
    expect([await balances(held.id), await balances(free.id), await balances(parent.id)]).toEqual([3_000, 0, 3_000]);
  });

  test('policy validation_period: only a written dispute within the period holds; all: every open one', async () => {
    await api.PUT('/settings', { body: { dispute_hold: 'validation_period' } });
    try {
      const late = await payer(5_000, { validation_notice_sent_at: await sandboxDayAfter(api, -60) });
      const oral = await payer(5_000);
      const noNotice = await payer(5_000);
      const lateDispute = (await dispute(late.account.id)).data!.data;
      expect(lateDispute).toMatchObject({ within_validation_period: false, hold: false });
      expect((await api.GET('/debt-accounts/{id}', { params: { path: { id: late.account.id } } })).data!.data.validation_notice_sent_at).toBe(await sandboxDayAfter(api, -60));
      expect((await dispute(oral.account.id, { in_writing: false })).data!.data.hold).toBe(false);
      expect((await dispute(noNotice.account.id)).data!.data).toMatchObject({ within_validation_period: true, hold: true });
      expect((await charge(late.account.id, late.methodId)).response.status).toBe(201);
      expect((await charge(oral.account.id, oral.methodId)).response.status).toBe(201);
      expect((await charge(noNotice.account.id, noNotice.methodId)).response.status).toBe(409);
      await api.PUT('/settings', { body: { dispute_hold: 'all' } });
      expect((await charge(late.account.id, late.methodId)).response.status).toBe(409);
      expect((await charge(oral.account.id, oral.methodId)).response.status).toBe(409);
    } finally {
      await api.PUT('/settings', { body: { dispute_hold: 'all' } });
    }
  });
});

describe('events', () => {
  test('create, update on a move, a comment and a file, and the account updated as the hold starts and ends: each as the document says', async () => {
    const { account } = await payer(5_000);
    const id = (await dispute(account.id)).data!.data.id;
    await api.POST('/disputes/{id}/comments', { params: { path: { id } }, body: { comment: 'Noted.', author: { name: 'Dana Whitfield' } } });
    await upload(id, PDF, 'application/pdf');
    await move(id, 'withdrawn');
    expect(await outboxEvents(app, 'debt-account-dispute.create', id)).toEqual([expect.objectContaining({ status: 'pending', reason: 'wrong_amount' })]);
    const updates = await outboxEvents(app, 'debt-account-dispute.update', id);
    expect(updates.map((data) => [data.status, data.comments.length, data.files.length])).toEqual([
      ['pending', 1, 0],
      ['pending', 1, 1],
      ['withdrawn', 1, 1],
    ]);
    expect(updates[1]!.files[0].url).toMatch(new RegExp(`^https://.+/api/v1/disputes/${id}/files/`));
    // debt-account.update: at creation (the hold starts) and at withdrawal (it ends).
    expect(await outboxEvents(app, 'debt-account.update', account.id)).toHaveLength(2);
    const mail = await app.db.raw(`SELECT data FROM pgboss.job WHERE name = 'email' AND data->>'subject' LIKE ?`, [`New dispute on account ${account.external_id}%`]);
    expect(mail.rows).toHaveLength(1);
  });
});
