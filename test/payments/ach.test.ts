/**
 * ACH debits in the sandbox: pending when made, then settled or returned by the durable
 * settlement job, with the balance, the charge, the transactions and the events following.
 */
import type { Schemas } from '../../client';
import { settleAch } from '../../server/payments/ach-settlement';
import { accountOf, newCustomer, newDebtAccount, testAch, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { eventually, outboxEvents, subscribeToEverything } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  // Settled at once here, so that the job runs during the test; the delay itself is checked below.
  app = await startTestApp({ sandboxAchSettlementSeconds: 0, webhookAllowInsecureUrls: true });
  await subscribeToEverything(app.sandbox);
  await app.startWorkers();
});
afterAll(async () => app?.stop());

async function debit(accountNumber: string, amount = 4000) {
  const customer = await newCustomer(app.sandbox);
  const account = await newDebtAccount(app.sandbox, customer.id, { balance: 4000, external_id: unique('DA') });
  const { data, response } = await app.sandbox.POST('/charges', { body: { amount, debt_account_id: account.id, ach: testAch(accountNumber) } });
  expect(response.status).toBe(201);
  return { account, charge: data!.data };
}

async function finalCharge(id: string): Promise<Schemas['Charge']> {
  return eventually(async () => {
    const { data } = await app.sandbox.GET('/charges/{id}', { params: { path: { id } } });
    return data!.data.status === 'pending' ? undefined : data!.data;
  }, `charge ${id} settled or returned`);
}

/** The `name` events of the charge (ACH events carry its gateway reference); every `name` event must conform. */
async function events(name: string, chargeId: string) {
  const found = await outboxEvents(app, name, () => true);
  const references = (await app.db('charges').where({ id: chargeId }).first('gateway_reference')).gateway_reference;
  return found.filter((data) => data.reference_number === references);
}

test.each(['000123456789', '000999999991'])('account %s: pending (the balance already counts it), then settled', async (number) => {
  const { account, charge } = await debit(number);
  expect(charge.status).toBe('pending');
  const settled = await finalCharge(charge.id);
  expect(settled).toMatchObject({ status: 'succeeded', return_code: null });
  expect(await accountOf(app.sandbox, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
  const txs = (await app.sandbox.GET('/transactions', { params: { query: { debt_account_id: account.id } } })).data!.data;
  expect(txs.map((t) => [t.type, t.status]).sort()).toEqual([['ach_settlement', 'settled'], ['charge', 'succeeded']]);
  expect(await events('transaction.settled-ach', charge.id)).toHaveLength(1);
});

test.each([
  ['000222222227', 'R01'],
  ['000111111113', 'R02'],
  ['000111111116', 'R03'],
  ['000333333335', 'R10'],
])('account %s: pending, then returned %s; the balance is given back and the account active again', async (number, code) => {
  const { account, charge } = await debit(number);
  expect((await accountOf(app.sandbox, account.id)).status).toBe('paid_off');
  const returned = await finalCharge(charge.id);
  expect(returned).toMatchObject({ status: 'returned', return_code: code, error_code: code });
  expect(await accountOf(app.sandbox, account.id)).toMatchObject({ current_balance: 4000, status: 'active' });
  const [event] = await events('transaction.returned-ach', charge.id);
  expect(event).toMatchObject({ status: 'returned', gateway_code: code, amount_cents: -4000 });
});

test('the settlement waits SANDBOX_ACH_SETTLEMENT_SECONDS in a durable job; a pending debit can be voided, and the job then leaves it', async () => {
  app.config.sandboxAchSettlementSeconds = 172_800;
  try {
    const { account, charge } = await debit('000123456789', 1000);
    const { rows } = await app.db.raw(
      `SELECT extract(epoch FROM start_after - created_on) AS delay FROM pgboss.job WHERE name = 'ach-settlement' AND data->>'chargeId' = ?`,
      [charge.id],
    );
    expect(Math.round(Number(rows[0].delay))).toBe(172_800);
    const voided = await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: charge.id } } });
    expect(voided.data!.data.status).toBe('voided');
    expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(4000);
    await settleAch(app.deps, { organizationId: app.organization.organization_id, environment: 'sandbox', chargeId: charge.id });
    expect((await app.sandbox.GET('/charges/{id}', { params: { path: { id: charge.id } } })).data!.data.status).toBe('voided');
    expect((await accountOf(app.sandbox, account.id)).current_balance).toBe(4000);
  } finally {
    app.config.sandboxAchSettlementSeconds = 0;
  }
});

test('a settled debit cannot be voided (409) but can be refunded', async () => {
  const { charge } = await debit('000123456789', 1000);
  await finalCharge(charge.id);
  expect((await app.sandbox.POST('/charges/{id}/void', { params: { path: { id: charge.id } } })).response.status).toBe(409);
  const refunded = await app.sandbox.POST('/charges/{id}/refund', { params: { path: { id: charge.id } } });
  expect(refunded.data!.data.status).toBe('refunded');
});
