/**
 * An Idempotency-Key belongs to whoever sent it: an integrator's token, or a customer in a
 * browser session of the Portal. The same key from another caller is that caller's own new
 * key: it charges that caller's account and never answers the other's charge.
 */
import { randomUUID } from 'node:crypto';
import { customerWithAccount, newSession, testCard, type ErrorBody } from '../support/fixtures';
import { openPortal } from '../support/portal-browser';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const chargesOf = async (accountId: string) => app.db('charges').where({ debt_account_id: accountId }).select('id', 'amount', 'customer_id');
const balanceOf = async (accountId: string) => (await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: accountId } } })).data!.data.current_balance;

async function portalOf(customerId: string, accountId: string) {
  const session = await newSession(app.sandbox, { customer_id: customerId, debt_account_id: accountId });
  return openPortal(app.config.portalUrl, session.portal_url);
}

const apiCharge = (accountId: string, key: string, amount = 5000) =>
  app.sandbox.POST('/charges', { body: { debt_account_id: accountId, amount, card: testCard() }, headers: { 'Idempotency-Key': key } });

describe('one key, two callers', () => {
  test("a Portal payment sent with the key of another customer's API charge charges its own account, and never answers that charge", async () => {
    const b = await customerWithAccount(app.sandbox, {}, { balance: 40000 });
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const key = randomUUID();
    const theirs = await apiCharge(b.account.id, key);
    expect(theirs.response.status).toBe(201);

    const browser = await portalOf(a.customer.id, a.account.id);
    const paid = await browser.call('POST', `/accounts/${a.account.id}/payments`, { amount: 2500, card: testCard(), accept_policy: true }, { 'idempotency-key': key });
    expect(paid.status).toBe(201);
    const charge = paid.body.data.charge;
    expect(charge.id).not.toBe(theirs.data!.data.id);
    expect(charge).toMatchObject({ debt_account_id: a.account.id, customer_id: a.customer.id, amount: 2500, status: 'succeeded' });
    expect(paid.body.data.current_balance).toBe(27500);
    expect(await balanceOf(a.account.id)).toBe(27500);
    // B's side is as it was: one charge, and its answer to its own retry is still its own.
    expect(await chargesOf(b.account.id)).toHaveLength(1);
    expect(await balanceOf(b.account.id)).toBe(35000);
    const retried = await apiCharge(b.account.id, key);
    expect(retried.data!.data.id).toBe(theirs.data!.data.id);
  });

  test("POST /charges sent with the key of another customer's Portal payment charges the account it names, and never answers the Portal's charge", async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const b = await customerWithAccount(app.sandbox, {}, { balance: 40000 });
    const key = randomUUID();
    const browser = await portalOf(a.customer.id, a.account.id);
    const paid = await browser.call('POST', `/accounts/${a.account.id}/payments`, { amount: 2500, card: testCard(), accept_policy: true }, { 'idempotency-key': key });
    expect(paid.status).toBe(201);

    const charged = await apiCharge(b.account.id, key, 4000);
    expect(charged.response.status).toBe(201);
    expect(charged.response.headers.get('idempotent-replayed')).toBeNull();
    expect(charged.data!.data).toMatchObject({ debt_account_id: b.account.id, customer_id: b.customer.id, amount: 4000 });
    expect(charged.data!.data.id).not.toBe(paid.body.data.charge.id);
    expect(await balanceOf(b.account.id)).toBe(36000);
    expect(await balanceOf(a.account.id)).toBe(27500);
    expect(await chargesOf(a.account.id)).toHaveLength(1);
  });

  test('the same customer in another browser session is another caller too: a new payment', async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const key = randomUUID();
    const first = await (await portalOf(a.customer.id, a.account.id)).call('POST', `/accounts/${a.account.id}/payments`, { amount: 1000, card: testCard(), accept_policy: true }, { 'idempotency-key': key });
    const second = await (await portalOf(a.customer.id, a.account.id)).call('POST', `/accounts/${a.account.id}/payments`, { amount: 1000, card: testCard(), accept_policy: true }, { 'idempotency-key': key });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.charge.id).not.toBe(first.body.data.charge.id);
    expect(await balanceOf(a.account.id)).toBe(28000);
  });
});

describe("one caller's key", () => {
  test('a Portal retry with the same key and payment answers the same charge (another security code is the same payment); another amount is 422 idempotency_key_reused', async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const browser = await portalOf(a.customer.id, a.account.id);
    const key = randomUUID();
    const pay = (amount: number, code: string) =>
      browser.call('POST', `/accounts/${a.account.id}/payments`, { amount, card: { ...testCard(), card_security_code: code }, accept_policy: true }, { 'idempotency-key': key });
    const first = await pay(1000, '123');
    const again = await pay(1000, '456');
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.data.charge.id).toBe(first.body.data.charge.id);
    const other = await pay(1500, '123');
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ errorCode: 'idempotency_key_reused', errors: { 'headers.idempotency-key': [expect.any(String)] } });
    expect(await chargesOf(a.account.id)).toHaveLength(1);
    expect(await balanceOf(a.account.id)).toBe(29000);
  });

  test('a Portal key of 256 characters is a 422 on the header, and nothing is charged', async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const browser = await portalOf(a.customer.id, a.account.id);
    const paid = await browser.call('POST', `/accounts/${a.account.id}/payments`, { amount: 1000, card: testCard(), accept_policy: true }, { 'idempotency-key': 'k'.repeat(256) });
    expect(paid.status).toBe(422);
    expect(Object.keys(paid.body.errors)).toEqual(['headers.idempotency-key']);
    expect(await chargesOf(a.account.id)).toHaveLength(0);
  });

  test("once the API's record of a key has expired, the charge it made still answers the same request, and another request with it is 422", async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const key = randomUUID();
    const first = await apiCharge(a.account.id, key, 1000);
    expect(first.response.status).toBe(201);
    await app.db('idempotency_keys').where({ key }).update({ expires_at: app.db.raw(`now() - interval '1 second'`) });
    const again = await apiCharge(a.account.id, key, 1000);
    expect(again.response.status).toBe(201);
    expect(again.data!.data.id).toBe(first.data!.data.id);
    await app.db('idempotency_keys').where({ key }).update({ expires_at: app.db.raw(`now() - interval '1 second'`) });
    const other = await apiCharge(a.account.id, key, 2000);
    expect(other.response.status).toBe(422);
    expect((other.error as ErrorBody).errorCode).toBe('idempotency_key_reused');
    expect(await chargesOf(a.account.id)).toHaveLength(1);
    expect(await balanceOf(a.account.id)).toBe(29000);
  });

  test('two requests of one caller racing with one key past the key record: one charge, and the loser answers it', async () => {
    const a = await customerWithAccount(app.sandbox, {}, { balance: 30000 });
    const browser = await portalOf(a.customer.id, a.account.id);
    const key = randomUUID();
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => browser.call('POST', `/accounts/${a.account.id}/payments`, { amount: 1000, card: testCard(), accept_policy: true }, { 'idempotency-key': key })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((answer) => answer.body.data.charge.id)).size).toBe(1);
    expect(await chargesOf(a.account.id)).toHaveLength(1);
  });
});
