/**
 * What we read from Authorize.net ourselves, through the API against the local server that
 * speaks its JSON API: the late-arrival sweep as the pg-boss job every server runs (a charge
 * still processing recorded, one that arrived after it was released voided, never taken and
 * unrecorded), the daily read of its reports (a return only in the settled batches applied
 * once, however often it is read), and a card held for review that is declined later.
 */
import type { ApiClient } from '../../client';
import { accountOf, customerWithAccount, testAch, testCard } from '../support/fixtures';
import { startAuthorizeNetServer, type AuthorizeNetServer } from '../support/authorize-net-server';
import { startTestApp, type TestApp } from '../support/test-app';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';
import { QUEUES } from '../../server/jobs/queue';
import { recordAnswer } from '../../server/payments/charge-steps';
import { settleAch, settlementJob } from '../../server/payments/ach-settlement';
import { readLaterNotices, sweepProcessors } from '../../server/processor-notices/processor-reads';
import { invoiceNumberOf } from '../../server/gateway/authorize-net/authorize-net-gateway';
import type { Tenant } from '../../server/kernel/tenant';

const merchant = { apiLoginId: '7Rt4sW2xLq', transactionKey: '6Gh29Kd3mPq8Zs4T' };

let anet: AuthorizeNetServer;
let app: TestApp;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  anet = await startAuthorizeNetServer(merchant);
  app = await startTestApp({ authorizeNetApiUrl: anet.url.replace('/xml/v1/request.api', ''), processorTimeoutMs: 1000, webhookAllowInsecureUrls: true });
  api = app.sandbox;
  tenant = { organizationId: app.organization.organization_id, environment: 'sandbox', tokenHash: '' };
  await subscribeToEverything(api);
  const { response, error } = await api.PUT('/payment-processor', {
    body: { processor: 'authorize_net', credentials: { api_login_id: merchant.apiLoginId, transaction_key: merchant.transactionKey, signature_key: 'B'.repeat(128) } },
  });
  if (response.status !== 200) throw new Error(JSON.stringify(error));
});
afterAll(async () => {
  await app?.stop();
  await anet?.close();
});

const account = async (balance = 10_000) => (await customerWithAccount(api, {}, { balance })).account;
const charge = (body: Record<string, unknown>) => api.POST('/charges', { body: body as never });
const chargeOf = async (id: string) => (await api.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
const transactionsOf = async (accountId: string) =>
  (await api.GET('/transactions', { params: { query: { debt_account_id: accountId } } })).data!.data.map((t) => [t.type, t.status, t.amount, t.return_code]);
const transactionOf = (chargeId: string) => anet.transactions.find((each) => each.invoiceNumber === invoiceNumberOf(chargeId) && each.type === 'authCaptureTransaction')!;

async function until(what: () => Promise<boolean>, label: string): Promise<void> {
  for (let tries = 0; tries < 150; tries += 1) {
    if (await what()) return;
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${label}: not within 30 s`);
}

test('the late-arrival sweep runs as a pg-boss job every 5 minutes: a charge still processing is recorded, one that reached the processor after it was released is voided; run again, nothing more', async () => {
  const workers = await app.startWorkers();
  const schedules = (await app.boss.getSchedules()) as { name: string; cron: string }[];
  expect(schedules).toEqual(expect.arrayContaining([expect.objectContaining({ name: QUEUES.processorLateArrivals, cron: '*/5 * * * *' })]));

  const kept = await account();
  const released = await account();
  // Both answers lost after the processor charged: each charge is processing, its money reserved.
  anet.behaviour.loseAnswers = 2;
  const processing = await charge({ amount: 1500, debt_account_id: kept.id, card: testCard() });
  const late = await charge({ amount: 2500, debt_account_id: released.id, card: testCard() });
  expect([processing.response.status, late.response.status]).toEqual([202, 202]);
  // The second was given up on (recovery's "never received", once the window had passed): released.
  await recordAnswer(app.deps, tenant, late.data!.data.id, 'never_received', new Date());
  expect(await chargeOf(late.data!.data.id)).toMatchObject({ status: 'failed' });
  expect((await accountOf(api, released.id)).current_balance).toBe(10_000);
  expect(transactionOf(late.data!.data.id).status).toBe('capturedPendingSettlement');

  await app.boss.send(QUEUES.processorLateArrivals, {});
  await until(async () => (await chargeOf(processing.data!.data.id)).status === 'succeeded' && transactionOf(late.data!.data.id).status === 'voided', 'the sweep');
  expect((await accountOf(api, kept.id)).current_balance).toBe(8500);
  expect(await transactionsOf(kept.id)).toEqual([['charge', 'succeeded', 1500, null]]);
  // The released charge stays released, and its money is no longer taken.
  expect(await chargeOf(late.data!.data.id)).toMatchObject({ status: 'failed' });
  expect((await accountOf(api, released.id)).current_balance).toBe(10_000);
  await workers.stop();

  // Run again: the voided transaction holds nothing, the recorded one is its charge's: nothing is sent.
  const voids = () => anet.sent('createTransactionRequest').filter((each) => each.transactionRequest.transactionType === 'voidTransaction').length;
  expect(voids()).toBe(1);
  const [again] = await sweepProcessors(app.deps);
  expect(again).toMatchObject({ recovered: [], takenBack: [] });
  expect(voids()).toBe(1);
  expect((await accountOf(api, kept.id)).current_balance).toBe(8500);
  expect(await outboxEvents(app, 'charge.succeeded', processing.data!.data.id)).toHaveLength(1);
});

test('a return only in the settled batches (no webhook) is applied by the daily read once, even when it runs twice; any NACHA code is kept (R83, IAT)', async () => {
  const schedules = (await app.boss.getSchedules()) as { name: string }[];
  expect(schedules.map((each) => each.name)).toContain(QUEUES.processorLaterNotices);
  const acct = await account();
  const { data, response } = await charge({ amount: 3000, debt_account_id: acct.id, ach: testAch('000123456789') });
  expect(response.status).toBe(201);
  const id = data!.data.id;
  expect(data!.data.status).toBe('pending');
  expect((await accountOf(api, acct.id)).current_balance).toBe(7000);
  anet.settle();
  anet.returnItem(transactionOf(id).transId, 'R83', 'Foreign receiving DFI unable to settle');

  expect(await readLaterNotices(app.deps)).toBe(1);
  expect(await readLaterNotices(app.deps)).toBe(0);
  expect(await chargeOf(id)).toMatchObject({ status: 'returned', return_code: 'R83', error: 'Foreign receiving DFI unable to settle' });
  expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  expect((await transactionsOf(acct.id)).filter(([type]) => type === 'ach_return')).toEqual([['ach_return', 'returned', -3000, 'R83']]);
  expect(await outboxEvents(app, 'transaction.returned-ach', (payload) => payload.gateway_code === 'R83')).toHaveLength(1);
});

test('a card held for review and declined once reviewed: the settlement job asks, the charge fails with the decline, the balance is owed again, charge.failed once', async () => {
  const acct = await account();
  const { data, response } = await charge({ amount: 4000, debt_account_id: acct.id, card: testCard('4000000000000259') });
  expect(response.status).toBe(201);
  const id = data!.data.id;
  expect(data!.data.status).toBe('pending');
  expect((await accountOf(api, acct.id)).current_balance).toBe(6000);
  anet.review(transactionOf(id).transId, false);

  expect(await settleAch(app.deps, settlementJob(tenant, id))).toBe(true);
  expect(await settleAch(app.deps, settlementJob(tenant, id))).toBe(false);
  expect(await chargeOf(id)).toMatchObject({ status: 'failed', error_code: 'card_declined', return_code: null });
  expect((await accountOf(api, acct.id)).current_balance).toBe(10_000);
  expect(await transactionsOf(acct.id)).toEqual([['charge', 'failed', 0, null]]);
  expect(await outboxEvents(app, 'charge.failed', id)).toHaveLength(1);
});
