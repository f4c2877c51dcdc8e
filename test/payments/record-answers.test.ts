/**
 * The one record path (payments/charge-steps.ts `recordAnswers`, set-based in charge-outcome.ts):
 * a batch holding every kind of answer at once — taken, declined, refused, never received, and one
 * charge named twice — records each as a charge alone would be, and the one named twice once.
 */
import { randomUUID } from 'node:crypto';
import { accountOf, accountWithCard } from '../support/fixtures';
import { restoreGatewayAfterEach, sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { recordAnswers } from '../../server/payments/charge-steps';
import type { Tenant } from '../../server/kernel/tenant';
import { outboxEvents, subscribeToEverything } from '../support/webhooks';

let app: TestApp;
let tenant: Tenant;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  tenant = sandboxTenantOf(app);
});
restoreGatewayAfterEach(() => app);
afterAll(async () => app?.stop());

test('a batch of every kind of answer: each recorded as alone, the charge named twice once, every balance the original less what was taken', async () => {
  // Reserved charges whose answers were lost (202 processing), answered here in one batch.
  app.config.testSandboxLoseAnswerCents = 1313;
  app.config.gatewayAnswerWaitMs = 100;
  const accounts = await Promise.all([1, 2, 3, 4].map(() => accountWithCard(app.sandbox, 10_000)));
  const reserved = [];
  for (const { account, methodId } of accounts) {
    const answer = await app.sandbox.POST('/charges', {
      body: { amount: 1313, debt_account_id: account.id, payment_method_id: methodId },
      params: { header: { 'Idempotency-Key': randomUUID() } } as never,
    });
    expect(answer.response.status).toBe(202);
    reserved.push(answer.data!.data);
  }
  const [taken, declined, refused, lost] = reserved.map((charge) => charge.id) as [string, string, string, string];
  const now = new Date();
  const outcomes = await recordAnswers(app.deps, [
    { tenant, chargeId: taken, answer: { status: 'succeeded', reference: `ref-${randomUUID()}` }, now },
    { tenant, chargeId: declined, answer: { status: 'failed', reference: `ref-${randomUUID()}`, code: 'card_declined', message: 'The card was declined.' }, now },
    { tenant, chargeId: refused, answer: 'refused', now },
    { tenant, chargeId: lost, answer: 'never_received', now },
    { tenant, chargeId: taken, answer: { status: 'succeeded', reference: 'the same again' }, now },
    { tenant: { ...tenant, organizationId: randomUUID() }, chargeId: taken, answer: { status: 'succeeded', reference: 'not theirs' }, now },
  ]);
  expect(outcomes.map((outcome) => outcome && [outcome.charge.status, outcome.charge.error_code, outcome.declined?.errorCode])).toEqual([
    ['succeeded', null, undefined],
    ['failed', 'card_declined', 'card_declined'],
    ['failed', 'processing_error', 'processing_error'],
    ['failed', 'processing_error', 'processing_error'],
    ['succeeded', null, undefined],
    undefined,
  ]);
  // Named twice: one outcome, the first answer's.
  expect(outcomes[4]!.charge.gateway_reference).toBe(outcomes[0]!.charge.gateway_reference);

  const balances = await Promise.all(accounts.map(async ({ account }) => (await accountOf(app.sandbox, account.id)).current_balance));
  expect(balances).toEqual([10_000 - 1313, 10_000, 10_000, 10_000]);
  const shown = async (id: string) => (await app.sandbox.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
  expect((await shown(taken)).status).toBe('succeeded');
  expect((await shown(lost)).error).toMatch(/never received/);
  expect((await shown(refused)).error).toMatch(/refused/);
  const transactions = async (id: string) => (await app.db('transactions').where({ charge_id: id }).select('status', 'amount')).map((row) => [row.status, Number(row.amount)]);
  expect(await transactions(taken)).toEqual([['succeeded', 1313]]);
  for (const id of [declined, refused, lost]) expect(await transactions(id)).toEqual([['failed', 0]]);
  expect(await outboxEvents(app, 'charge.succeeded', taken)).toHaveLength(1);
  for (const id of [declined, refused, lost]) expect(await outboxEvents(app, 'charge.failed', id)).toHaveLength(1);
}, 60_000);
