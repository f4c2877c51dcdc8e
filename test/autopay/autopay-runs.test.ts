/**
 * Autopay carried out by the scheduler, seen through the API: on its day at 14:00 UTC on the
 * sandbox clock, exactly once per month (also with two processes at once, and when stopped and
 * turned on again), never above the balance, skipped while the terms refuse the account, and a
 * decline e-mails the customer a link to update the method. Autopay is turned on here by the
 * service the Portal calls (the Portal's own test turns it on in Chromium).
 */
import { connect } from '../../server/db/database';
import { withClock } from '../../server/kernel/clock';
import type { Tenant } from '../../server/kernel/tenant';
import { autopayService, type AutopayChoice } from '../../server/autopay/autopay-service';
import { runAutopay } from '../../server/autopay/autopay-runner';
import { accountOf, accountWithCard, balanceOf } from '../support/fixtures';
import { sandboxNow } from '../support/sandbox-clock';
import { sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.stop();
});

const MINUTE = 60_000;
const sandboxTenant = async (): Promise<Tenant> => withClock(app.db, sandboxTenantOf(app));

/** Turns autopay on for the account as its customer, at the sandbox's time; answers the account's `autopay`. */
async function turnOn(accountId: string, customerId: string, choice: Omit<AutopayChoice, 'day_of_month'> & { day_of_month?: number }) {
  const now = await sandboxNow(app.sandbox);
  const day = choice.day_of_month ?? Math.min(28, (now.getUTCDate() % 28) + 1);
  await autopayService(app.deps).turnOn(await sandboxTenant(), { customerId, now }, accountId, { ...choice, day_of_month: day });
  return (await accountOf(app.sandbox, accountId)).autopay!;
}

async function moveTo(time: Date): Promise<void> {
  const { response } = await app.sandbox.POST('/sandbox/clock', { body: { advance_to: time.toISOString() } });
  expect(response.status).toBe(200);
}

const autopayCharges = async (accountId: string) =>
  (await app.sandbox.GET('/charges', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data.filter((charge) => charge.source === 'autopay');

test('a custom amount is charged on its day at 14:00 UTC on the sandbox clock, once a month, and the API shows the autopay', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 20_000);
  const autopay = await turnOn(account.id, customer.id, { amount_type: 'custom', amount: 3_000, payment_method_id: methodId });
  expect(autopay).toMatchObject({ amount_type: 'custom', amount: 3_000, payment_method_id: methodId, last_outcome: null });
  const due = new Date(autopay.next_run_at);
  expect([due.getUTCHours(), due.getUTCMinutes()]).toEqual([14, 0]);

  await moveTo(new Date(due.getTime() - MINUTE));
  expect(await autopayCharges(account.id)).toEqual([]);
  await moveTo(new Date(due.getTime() + MINUTE));
  expect((await autopayCharges(account.id)).map((c) => [c.amount, c.status])).toEqual([[3_000, 'succeeded']]);
  expect(await balanceOf(app.sandbox, account.id)).toBe(17_000);
  const after = (await accountOf(app.sandbox, account.id)).autopay!;
  expect(after).toMatchObject({ last_outcome: 'charged', last_error: null, last_run_at: due.toISOString() });
  const next = new Date(after.next_run_at);
  expect([next.getUTCDate(), next.getUTCMonth()]).toEqual([due.getUTCDate(), (due.getUTCMonth() + 1) % 12]);

  // Two more days, nothing; the next month's day, once more.
  await moveTo(new Date(due.getTime() + 2 * 86_400_000));
  expect(await autopayCharges(account.id)).toHaveLength(1);
  await moveTo(new Date(next.getTime() + MINUTE));
  expect((await autopayCharges(account.id)).map((c) => c.amount)).toEqual([3_000, 3_000]);
});

test('it never charges more than the balance, and follows the balance as it changes', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 5_000);
  const autopay = await turnOn(account.id, customer.id, { amount_type: 'custom', amount: 4_000, payment_method_id: methodId });
  // The balance falls after autopay was turned on: the run takes only what is owed.
  await app.sandbox.POST('/external-charges', { body: { debt_account_id: account.id, amount: 3_500, paid_at: (await sandboxNow(app.sandbox)).toISOString().slice(0, 10), method: 'cash' } });
  await moveTo(new Date(new Date(autopay.next_run_at).getTime() + MINUTE));
  expect((await autopayCharges(account.id)).map((c) => c.amount)).toEqual([1_500]);
  const paid = await accountOf(app.sandbox, account.id);
  expect([paid.current_balance, paid.status]).toEqual([0, 'paid_off']);
});

test('exactly once per month: two processes at the due time charge once, and stopped and turned on again it does not charge that month twice', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 50_000);
  const autopay = await turnOn(account.id, customer.id, { amount_type: 'full_balance', amount: null, payment_method_id: methodId });
  const due = new Date(autopay.next_run_at);
  const tenant = await sandboxTenant();
  const pools = [connect(app.databaseUrl, 2), connect(app.databaseUrl, 2)];
  try {
    const ran = await Promise.all(pools.map((db) => runAutopay({ ...app.deps, db }, tenant, account.id, due)));
    expect(ran.filter(Boolean).length).toBeGreaterThanOrEqual(1);
  } finally {
    await Promise.all(pools.map((db) => db.destroy()));
  }
  expect((await autopayCharges(account.id)).map((c) => c.amount)).toEqual([50_000]);

  // Owed again (a new balance), stopped and turned on again on the same day: that month has run.
  await app.sandbox.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 50_000, current_balance: 10_000, status: 'active' } });
  expect((await app.sandbox.DELETE('/debt-accounts/{id}/autopay', { params: { path: { id: account.id } } })).response.status).toBe(200);
  await autopayService(app.deps).turnOn(tenant, { customerId: customer.id, now: new Date(due.getTime() - MINUTE) }, account.id, {
    amount_type: 'full_balance',
    amount: null,
    payment_method_id: methodId,
    day_of_month: due.getUTCDate(),
  });
  expect(await runAutopay(app.deps, tenant, account.id, due)).toBe(true);
  expect((await autopayCharges(account.id)).map((c) => c.amount)).toEqual([50_000]);
});

test('a month in which the terms refuse the account is skipped, not charged later', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 9_000);
  const autopay = await turnOn(account.id, customer.id, { amount_type: 'full_balance', amount: null, payment_method_id: methodId });
  await app.sandbox.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 9_000, status: 'closed' } });
  await moveTo(new Date(new Date(autopay.next_run_at).getTime() + MINUTE));
  expect(await autopayCharges(account.id)).toEqual([]);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'skipped', last_error: expect.stringContaining('closed') });
  await app.sandbox.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 9_000, status: 'active' } });
  await moveTo(new Date(new Date(autopay.next_run_at).getTime() + 2 * 86_400_000));
  expect(await autopayCharges(account.id)).toEqual([]);
});

test('a declined autopay charge e-mails the customer a link to update the method', async () => {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, 9_000, {}, '4000000000000002');
  const autopay = await turnOn(account.id, customer.id, { amount_type: 'full_balance', amount: null, payment_method_id: methodId });
  await moveTo(new Date(new Date(autopay.next_run_at).getTime() + MINUTE));
  expect((await autopayCharges(account.id)).map((c) => c.status)).toEqual(['failed']);
  expect(await balanceOf(app.sandbox, account.id)).toBe(9_000);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'failed', last_error: 'The card was declined.' });
  const { data } = await app.sandbox.GET('/communications', { params: { query: { debt_account_id: account.id, kind: 'autopay_failed' } } });
  expect(data!.data).toHaveLength(1);
  const mail = data!.data[0]!;
  expect(mail).toMatchObject({ customer_id: customer.id, to: customer.email, subject: 'Your automatic payment did not go through' });
  expect(['queued', 'held', 'sent', 'logged']).toContain(mail.status);
  expect(mail.text).toContain('The card was declined.');
  expect(mail.text).toMatch(new RegExp(`To update your payment method, open: ${app.config.portalUrl}/s/\\S+`));
});

describe('DELETE /debt-accounts/{id}/autopay', () => {
  test('stops it: the API shows none, its day charges nothing; again, or another organization, 404', async () => {
    const { customer, account, methodId } = await accountWithCard(app.sandbox, 9_000);
    const autopay = await turnOn(account.id, customer.id, { amount_type: 'full_balance', amount: null, payment_method_id: methodId });
    expect((await app.other.DELETE('/debt-accounts/{id}/autopay', { params: { path: { id: account.id } } })).response.status).toBe(404);
    const stopped = await app.sandbox.DELETE('/debt-accounts/{id}/autopay', { params: { path: { id: account.external_id! } } });
    expect([stopped.response.status, stopped.data]).toEqual([200, { success: true }]);
    expect((await accountOf(app.sandbox, account.id)).autopay).toBeNull();
    await moveTo(new Date(new Date(autopay.next_run_at).getTime() + MINUTE));
    expect(await autopayCharges(account.id)).toEqual([]);
    const again = await app.sandbox.DELETE('/debt-accounts/{id}/autopay', { params: { path: { id: account.id } } });
    expect([again.response.status, again.error?.errorCode]).toEqual([404, 'not_found']);
  });
});
