/**
 * Charges in steps around a slow gateway, as an integrator sees them: two payments at once
 * never take more than the balance, a lost or late answer is a 202 `processing` charge, the
 * same Idempotency-Key meanwhile is a 409 and later the one outcome, and recovery records what
 * the gateway did exactly once or releases the reservation.
 */
import { randomUUID } from 'node:crypto';
import { accountOf, accountWithCard, expectFieldError, testCard, type ErrorBody } from '../support/fixtures';
import { restoreGatewayAfterEach, sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { recoverCharges } from '../../server/payments/charge-recovery';
import { reserveOn } from '../../server/payments/create-charge';
import { gatewayFor } from '../../server/gateway/gateways';
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

const charge = (body: Record<string, unknown>, key?: string) =>
  app.sandbox.POST('/charges', { body: body as never, params: { header: key ? { 'Idempotency-Key': key } : {} } as never });

const gatewayPayments = async (accountId: string) =>
  Number((await app.db('sandbox_payments').join('charges', 'charges.gateway_reference', 'sandbox_payments.reference').where('charges.debt_account_id', accountId).count<{ count: string }[]>('* as count'))[0]!.count);

test('two payments at once on a slow gateway never take more than the balance: the second sees the first reserved', async () => {
  app.config.sandboxGatewayLatencyMs = 400;
  const { account } = await accountWithCard(app.sandbox, 10_000);
  const answers = await Promise.all([charge({ amount: 6000, debt_account_id: account.id, card: testCard() }), charge({ amount: 6000, debt_account_id: account.id, card: testCard() })]);
  const statuses = answers.map((answer) => answer.response.status).sort();
  expect(statuses).toEqual([201, 422]);
  expectFieldError(answers.find((answer) => answer.response.status === 422)!.error, 'amount');
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(4000);
});

test('the same Idempotency-Key twice at once reaches the gateway once: the second is told the first still runs, and a retry answers its charge', async () => {
  app.config.sandboxGatewayLatencyMs = 300;
  const { account, methodId } = await accountWithCard(app.sandbox, 10_000);
  const key = randomUUID();
  const body = { amount: 2500, debt_account_id: account.id, payment_method_id: methodId };
  const answers = await Promise.all([charge(body, key), charge(body, key)]);
  expect(answers.map((answer) => answer.response.status).sort()).toEqual([201, 409]);
  expect((answers.find((answer) => answer.response.status === 409)!.error as ErrorBody).errorCode).toBe('idempotency_key_in_use');
  expect(await gatewayPayments(account.id)).toBe(1);
  expect((await charge(body, key)).data!.data.id).toBe(answers.find((answer) => answer.response.status === 201)!.data!.data.id);
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(7500);
});

test('a lost answer: 202 processing, the amount reserved, 409 on a repeat; recovery records the payment once, then the repeat answers it', async () => {
  app.config.testSandboxLoseAnswerCents = 1313;
  app.config.gatewayAnswerWaitMs = 200;
  const { account, methodId } = await accountWithCard(app.sandbox, 5000);
  const key = randomUUID();
  const body = { amount: 1313, debt_account_id: account.id, payment_method_id: methodId };
  const first = await charge(body, key);
  expect(first.response.status).toBe(202);
  expect(first.data!.data).toMatchObject({ status: 'processing', amount: 1313, settled_at: null });
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(5000);
  // The reservation counts: the rest of the balance can be charged, no more.
  expectFieldError((await charge({ amount: 5000 - 1313 + 1, debt_account_id: account.id, payment_method_id: methodId })).error, 'amount');
  const again = await charge(body, key);
  expect(again.response.status).toBe(409);
  expect((again.error as ErrorBody).errorCode).toBe('idempotency_key_in_use');

  expect(await recoverCharges(app.deps, 0)).toBeGreaterThanOrEqual(1);
  expect(await recoverCharges(app.deps, 0)).toBe(0);
  const later = await charge(body, key);
  expect(later.response.status).toBe(201);
  expect(later.data!.data).toMatchObject({ id: first.data!.data.id, status: 'succeeded' });
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(5000 - 1313);
  expect(await gatewayPayments(account.id)).toBe(1);
  expect(await outboxEvents(app, 'charge.succeeded', (d) => d.id === first.data!.data.id)).toHaveLength(1);
});

test('an answer slower than GATEWAY_ANSWER_WAIT_MS: 202 processing, and the answer is recorded when it comes', async () => {
  app.config.sandboxGatewayLatencyMs = 600;
  app.config.gatewayAnswerWaitMs = 1;
  const { account, methodId } = await accountWithCard(app.sandbox, 5000);
  const first = await charge({ amount: 2000, debt_account_id: account.id, payment_method_id: methodId });
  expect(first.response.status).toBe(202);
  expect(first.data!.data.status).toBe('processing');
  const id = first.data!.data.id;
  let status = 'processing';
  while (status === 'processing') {
    await new Promise((done) => setTimeout(done, 50));
    status = (await app.sandbox.GET('/charges/{id}', { params: { path: { id } } })).data!.data.status;
  }
  expect(status).toBe('succeeded');
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(3000);
});

test('a reservation the gateway never received is released by recovery: failed processing_error, the whole balance chargeable again', async () => {
  const { account, methodId } = await accountWithCard(app.sandbox, 4000);
  const gateway = (await gatewayFor(app.deps, tenant))!;
  // Step 1 only, as a process killed right after the reservation committed leaves it.
  const reserved = await app.db.transaction((trx) =>
    reserveOn(app.deps, trx, tenant, gateway, { amount: 4000, debt_account_id: account.id, payment_method_id: methodId }, { source: 'api', payment_plan_id: null, payment_plan_charge_id: null }),
  );
  expect(reserved.charge.status).toBe('processing');
  expect((await charge({ amount: 100, debt_account_id: account.id, payment_method_id: methodId })).response.status).toBe(422);
  expect(await recoverCharges(app.deps, 0)).toBeGreaterThanOrEqual(1);
  const released = (await app.sandbox.GET('/charges/{id}', { params: { path: { id: reserved.charge.id } } })).data!.data;
  expect(released).toMatchObject({ status: 'failed', error_code: 'processing_error' });
  // The key is spent at the gateway: the request, had it still been on its way, takes nothing.
  expect(await gateway.charge(reserved.token, 4000, reserved.charge.id)).toMatchObject({ status: 'failed', code: 'processing_error' });
  expect((await charge({ amount: 4000, debt_account_id: account.id, payment_method_id: methodId })).response.status).toBe(201);
  expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(0);
  expect(await outboxEvents(app, 'charge.failed', (d) => d.id === reserved.charge.id)).toHaveLength(1);
});
