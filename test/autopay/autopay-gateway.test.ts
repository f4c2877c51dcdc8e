/**
 * Autopay on a real processor's terms: while the gateway answers a run's charge, the run holds
 * no transaction and no row lock (another writer locks the account and its autopay at once, and
 * the API shows the run `processing`); and a run whose answer is lost is finished by
 * charge-recovery from the gateway's own record - charged, or failed with its e-mail - once,
 * however often recovery runs.
 */
import { withClock } from '../../server/kernel/clock';
import type { Tenant } from '../../server/kernel/tenant';
import { autopayService } from '../../server/autopay/autopay-service';
import { runAutopay } from '../../server/autopay/autopay-runner';
import { recoverCharges } from '../../server/payments/charge-recovery';
import { accountOf, accountWithCard, balanceOf } from '../support/fixtures';
import { sandboxNow } from '../support/sandbox-clock';
import { restoreGatewayAfterEach, sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
restoreGatewayAfterEach(() => app);
afterAll(async () => {
  await app?.stop();
});

const sandboxTenant = async (): Promise<Tenant> => withClock(app.db, sandboxTenantOf(app));

/** Autopay of `amount` (or the whole balance) on for a new account of `balance`, due at its answered time. */
async function dueAutopay(balance: number, amount: number | null, cardNumber?: string) {
  const { customer, account, methodId } = await accountWithCard(app.sandbox, balance, {}, cardNumber);
  const now = await sandboxNow(app.sandbox);
  await autopayService(app.deps).turnOn(await sandboxTenant(), { customerId: customer.id, now }, account.id, {
    amount_type: amount === null ? 'full_balance' : 'custom',
    amount,
    payment_method_id: methodId,
    day_of_month: Math.min(28, (now.getUTCDate() % 28) + 1),
  });
  const autopay = (await accountOf(app.sandbox, account.id)).autopay!;
  return { customer, account, due: new Date(autopay.next_run_at) };
}

const autopayCharges = async (accountId: string) =>
  (await app.sandbox.GET('/charges', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data.filter((charge) => charge.source === 'autopay');

const declineMails = async (accountId: string) =>
  (await app.sandbox.GET('/communications', { params: { query: { debt_account_id: accountId, kind: 'autopay_failed' } } })).data!.data;

test('while the gateway answers a run, no transaction or row lock is held: another writer locks the account and its autopay at once, and the API shows the run processing', async () => {
  const { account, due } = await dueAutopay(20_000, 4_000);
  app.config.sandboxGatewayLatencyMs = 2_000;
  let finished = false;
  const run = runAutopay(app.deps, await sandboxTenant(), account.id, due).then((ran) => {
    finished = true;
    return ran;
  });
  // The reservation committed (seen from outside the run): its charge is `processing` while the gateway answers.
  let reserved: { id: string } | undefined;
  while (!reserved && !finished) {
    reserved = await app.db('charges').where({ debt_account_id: account.id, source: 'autopay', status: 'processing' }).first('id');
    if (!reserved) await new Promise((done) => setTimeout(done, 10));
  }
  const seen = await app.db.transaction(async (trx) => {
    // NOWAIT: a lock still held by the run fails here at once (55P03) instead of waiting.
    const locked = await trx('debt_accounts').where({ id: account.id }).forUpdate().noWait().first('id');
    const autopay = await trx('autopays').where({ debt_account_id: account.id }).forUpdate().noWait().first('id');
    // Holding the account's lock, the answer cannot have been recorded under us.
    const charge = reserved && (await trx('charges').where({ id: reserved.id }).first('status'));
    return { locked: locked?.id, autopay: autopay !== undefined, status: charge?.status, finished };
  });
  expect(seen).toEqual({ locked: account.id, autopay: true, status: 'processing', finished: false });
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'processing', last_error: null, last_run_at: due.toISOString() });

  expect(await run).toBe(true);
  expect((await autopayCharges(account.id)).map((charge) => [charge.amount, charge.status])).toEqual([[4_000, 'succeeded']]);
  expect(await balanceOf(app.sandbox, account.id)).toBe(16_000);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'charged', last_error: null });
});

test('a run whose answer is lost is charged by recovery, once: processing until then, no e-mail, the balance taken once', async () => {
  const { account, due } = await dueAutopay(9_000, 1_313);
  app.config.testSandboxLoseAnswerCents = 1_313;
  app.config.gatewayAnswerWaitMs = 200;
  expect(await runAutopay(app.deps, await sandboxTenant(), account.id, due)).toBe(true);
  expect((await autopayCharges(account.id)).map((charge) => [charge.amount, charge.status])).toEqual([[1_313, 'processing']]);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'processing', last_error: null });
  expect(await balanceOf(app.sandbox, account.id)).toBe(9_000);
  // The month is claimed: running it again does nothing.
  expect(await runAutopay(app.deps, await sandboxTenant(), account.id, due)).toBe(false);

  expect(await recoverCharges(app.deps, 0)).toBeGreaterThanOrEqual(1);
  expect(await recoverCharges(app.deps, 0)).toBe(0);
  expect((await autopayCharges(account.id)).map((charge) => [charge.amount, charge.status])).toEqual([[1_313, 'succeeded']]);
  expect(await balanceOf(app.sandbox, account.id)).toBe(9_000 - 1_313);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'charged', last_error: null, last_run_at: due.toISOString() });
  expect(await declineMails(account.id)).toEqual([]);
  expect(await app.db('autopay_runs').where({ debt_account_id: account.id }).select('outcome')).toEqual([{ outcome: 'charged' }]);
});

test('a declined run whose answer is lost fails when recovery learns it: the customer is e-mailed once, nothing is taken', async () => {
  const { customer, account, due } = await dueAutopay(1_414, null, '4000000000000002');
  app.config.testSandboxLoseAnswerCents = 1_414;
  app.config.gatewayAnswerWaitMs = 200;
  expect(await runAutopay(app.deps, await sandboxTenant(), account.id, due)).toBe(true);
  expect((await autopayCharges(account.id)).map((charge) => charge.status)).toEqual(['processing']);
  expect(await declineMails(account.id)).toEqual([]);

  expect(await recoverCharges(app.deps, 0)).toBeGreaterThanOrEqual(1);
  expect(await recoverCharges(app.deps, 0)).toBe(0);
  expect((await autopayCharges(account.id)).map((charge) => [charge.status, charge.error_code])).toEqual([['failed', 'card_declined']]);
  expect(await balanceOf(app.sandbox, account.id)).toBe(1_414);
  expect((await accountOf(app.sandbox, account.id)).autopay).toMatchObject({ last_outcome: 'failed', last_error: 'The card was declined.' });
  const mails = await declineMails(account.id);
  expect(mails).toHaveLength(1);
  expect(mails[0]).toMatchObject({ customer_id: customer.id, subject: 'Your automatic payment did not go through' });
  expect(mails[0]!.text).toContain('could not be made: The card was declined.');
  expect(mails[0]!.text).toMatch(new RegExp(`To update your payment method, open: ${app.config.portalUrl}/s/\\S+`));
});
