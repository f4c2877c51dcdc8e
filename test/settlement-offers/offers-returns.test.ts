/**
 * ACH debits that paid a settlement, returned by the bank after the offer completed (tag
 * Settlement offers), through the sandbox's returning accounts and its clock: the write-off is
 * reversed by a transaction of its own (`settlement_write_off_reversal`, type_id 9), never
 * deleted; a full-amount offer is `broken` and the whole rest owed again; a plan's instalment
 * returned makes the offer `accepted` again while the plan retries it, and `broken` when the
 * plan gives it up. A refund (whole or partial) or a void by the agency of a charge that paid a
 * completed offer reverses the write-off the same way and breaks the offer. Every payload is
 * checked against the document.
 */
import type { ApiClient, Schemas } from '../../client';
import { accountOf, newCustomer, newDebtAccount, testAch, testCard, unique } from '../support/fixtures';
import { RUN_HOUR_UTC } from '../../server/kernel/dates';
import { advanceSandbox, DAY, sandboxNow, sandboxToday } from '../support/sandbox-clock';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import type { TestApp } from '../support/test-app';

/** The sandbox's account that the bank returns (R01, insufficient funds). */
const RETURNED = '000222222227';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

async function debtOf(balance: number) {
  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { balance, external_id: unique('RA') });
  return { customer, account };
}
async function offerOn(accountId: string, body: Record<string, unknown>) {
  const { data, response, error } = await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: accountId } }, body: body as Schemas['SettlementOfferCreate'] });
  if (response.status !== 201) throw new Error(`offer failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}
const MINUTE = 60_000;
/** Moves the sandbox clock to `at` (ms), everything due by then done. */
async function moveClockTo(at: number): Promise<void> {
  const { data } = await api.POST('/sandbox/clock', { body: { advance_to: new Date(at).toISOString() } });
  expect(data!.data.status).toBe('ready');
}
const accept = (id: string, body: Record<string, unknown>) => api.POST('/settlement-offers/{id}/accept', { params: { path: { id } }, body: body as Schemas['SettlementOfferAccept'] });
const read = async (id: string) => (await api.GET('/settlement-offers/{id}', { params: { path: { id } } })).data!.data;
const statuses = async (offerId: string) => (await outboxEvents(app, 'debt-account-settlement-offer.update', offerId)).map((data) => data.status);
const moved = async (accountId: string) =>
  (await api.GET('/transactions', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data.map((row) => [row.type, row.status, row.amount]).sort();

test('the full amount by ACH, returned after it completed: the write-off reversed, the offer broken, the whole rest owed again', async () => {
  const { account } = await debtOf(40_000);
  const offer = await offerOn(account.id, { discount_percentage: 25, months_period: 0 });
  const accepted = await accept(offer.id, { option: 'full_amount', ach: testAch(RETURNED) });
  // A pending debit counts as paid: completed at once, the rest written off.
  expect(accepted.data!.data).toMatchObject({ status: 'completed' });
  const chargeId = accepted.data!.data.charge_id!;
  expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });

  // The sandbox settles ACH debits two days on: this account's is returned.
  await advanceSandbox(api, 3);
  expect((await api.GET('/charges/{id}', { params: { path: { id: chargeId } } })).data!.data).toMatchObject({ status: 'returned', return_code: 'R01' });
  const broken = await read(offer.id);
  expect(broken).toMatchObject({ status: 'broken', completed_at: null, charge_id: chargeId });
  expect(broken.ended_at).not.toBeNull();
  expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_000, status: 'active' });
  expect(await moved(account.id)).toEqual([
    ['ach_return', 'returned', -30_000],
    ['charge', 'returned', 30_000],
    ['settlement_write_off', 'succeeded', 10_000],
    ['settlement_write_off_reversal', 'succeeded', -10_000],
  ]);
  expect(await statuses(offer.id)).toEqual(['accepted', 'completed', 'broken']);

  // What the webhooks were told, each payload conforming to the document (outboxEvents checks it).
  const [returned] = await outboxEvents(app, 'transaction.returned-ach', (data) => data.debt_account?.id === account.id);
  expect(returned).toMatchObject({ type_id: 5, source: 'settlement_offer', debt_account_settlement_offer: { id: offer.id } });
  // Events of one transaction share its time: the account's after the move is the one without an accepted offer.
  const updates = await outboxEvents(app, 'debt-account.update', account.id);
  const last = updates.find((data) => data.accepted_debt_account_settlement_offer === null && data.transactions.some((row: { type_id: number }) => row.type_id === 9))!;
  expect(last).toMatchObject({ current_balance: 40_000, status: 'active' });
  const reversal = last.transactions.find((row: { type_id: number }) => row.type_id === 9);
  expect(reversal).toMatchObject({ amount_cents: -10_000, source: 'settlement_offer', debt_account_settlement_offer: { id: offer.id, status: 'broken' } });
  // The whole balance may be paid again.
  expect((await api.POST('/charges', { body: { amount: 40_000, debt_account_id: account.id, ach: testAch('000123456789') } })).response.status).toBe(201);
});

test("a plan's ACH instalment returned after it completed: accepted again while the plan retries, broken when it gives up; each write-off reversed once", async () => {
  const { customer, account } = await debtOf(40_000);
  const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { ach: testAch(RETURNED) } })).data!.data;
  const offer = await offerOn(account.id, { discount_percentage: 25, months_period: 1 });
  const accepted = await accept(offer.id, { option: 'payment_plan', payment_method_id: method.id, frequency: 'monthly', start_date: await sandboxToday(api) });
  expect(accepted.data!.data.status).toBe('accepted');
  const planId = accepted.data!.data.payment_plan_id!;

  // The instalment runs at its day's hour (RUN_HOUR_UTC), a debit that settles two days on.
  const ranAt = Math.max((await sandboxNow(api)).getTime(), Date.parse(`${await sandboxToday(api)}T${RUN_HOUR_UTC}:00:00Z`)) + MINUTE;
  await moveClockTo(ranAt);
  expect((await read(offer.id)).status).toBe('completed');
  // Returned two days on, before the plan's retry three days after the instalment's date.
  await moveClockTo(ranAt + 2 * DAY + MINUTE);
  expect(await read(offer.id)).toMatchObject({ status: 'accepted', completed_at: null });
  expect((await api.GET('/payment-plans/{id}', { params: { path: { id: planId } } })).data!.data.status).toBe('active');
  // The settled sum is what is asked again, not the balance.
  expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_000, status: 'active' });
  const tooMuch = await api.POST('/charges', { body: { amount: 30_001, debt_account_id: account.id, payment_method_id: method.id } });
  expect(tooMuch.response.status).toBe(422);

  for (let day = 0; day < 12 && (await read(offer.id)).status !== 'broken'; day += 1) await advanceSandbox(api, 1);
  expect(await read(offer.id)).toMatchObject({ status: 'broken' });
  // Its last attempt returned too: the plan does not come back (the plans' rule), and the offer is broken.
  const plan = (await api.GET('/payment-plans/{id}', { params: { path: { id: planId } } })).data!.data;
  expect(plan.charges).toMatchObject([{ status: 'failed', attempts: 3, error_code: 'R01' }]);
  expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_000, status: 'active' });
  const rows = await moved(account.id);
  const writeOffs = rows.filter(([type]) => type === 'settlement_write_off');
  const reversals = rows.filter(([type]) => type === 'settlement_write_off_reversal');
  expect(writeOffs.length).toBeGreaterThan(0);
  expect(reversals).toEqual(writeOffs.map(([, status, amount]) => ['settlement_write_off_reversal', status, -Number(amount)]));
  expect(writeOffs).toHaveLength(3);
  expect(await statuses(offer.id)).toEqual(['accepted', 'completed', 'accepted', 'completed', 'accepted', 'completed', 'broken']);
});

describe('refunded or voided after it completed', () => {
  async function completedByCard() {
    const { account } = await debtOf(40_000);
    const offer = await offerOn(account.id, { discount_percentage: 25, months_period: 0 });
    const accepted = await accept(offer.id, { option: 'full_amount', card: testCard() });
    expect(accepted.data!.data).toMatchObject({ status: 'completed' });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    return { account, offer, chargeId: accepted.data!.data.charge_id! };
  }

  test('a partial refund: the write-off reversed once, the offer broken, the forgiven cents and the refund owed; a second refund reverses nothing more', async () => {
    const { account, offer, chargeId } = await completedByCard();
    const refund = (amount: number) => api.POST('/charges/{id}/refund', { params: { path: { id: chargeId } }, body: { amount } });
    expect((await refund(5_000)).response.status).toBe(200);
    const broken = await read(offer.id);
    expect(broken).toMatchObject({ status: 'broken', completed_at: null, charge_id: chargeId });
    expect(broken.ended_at).not.toBeNull();
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 15_000, status: 'active' });
    expect(await moved(account.id)).toEqual([
      ['charge', 'succeeded', 30_000],
      ['refund', 'succeeded', -5_000],
      ['settlement_write_off', 'succeeded', 10_000],
      ['settlement_write_off_reversal', 'succeeded', -10_000],
    ]);
    expect((await refund(25_000)).response.status).toBe(200);
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_000, status: 'active' });
    expect((await moved(account.id)).filter(([type]) => type === 'settlement_write_off_reversal')).toHaveLength(1);
    expect(await statuses(offer.id)).toEqual(['accepted', 'completed', 'broken']);
    const updates = await outboxEvents(app, 'debt-account.update', account.id);
    const reversal = updates.flatMap((data) => data.transactions).find((row: { type_id: number }) => row.type_id === 9);
    expect(reversal).toMatchObject({ amount_cents: -10_000, source: 'settlement_offer', debt_account_settlement_offer: { id: offer.id } });
  });

  test('a void of a pending ACH debit: the write-off reversed, the offer broken, the whole balance owed again', async () => {
    // An ACH debit is voided while pending (a card only on its own day, which the clock moved past in the tests above).
    const { account } = await debtOf(40_000);
    const offer = await offerOn(account.id, { discount_percentage: 25, months_period: 0 });
    const accepted = await accept(offer.id, { option: 'full_amount', ach: testAch('000123456789') });
    expect(accepted.data!.data).toMatchObject({ status: 'completed' });
    const chargeId = accepted.data!.data.charge_id!;
    const voided = await api.POST('/charges/{id}/void', { params: { path: { id: chargeId } } });
    expect(voided.data!.data.status).toBe('voided');
    expect(await read(offer.id)).toMatchObject({ status: 'broken', completed_at: null });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_000, status: 'active' });
    const rows = await moved(account.id);
    expect(rows.filter(([type]) => type !== 'charge')).toEqual([
      ['settlement_write_off', 'succeeded', 10_000],
      ['settlement_write_off_reversal', 'succeeded', -10_000],
      ['void', 'succeeded', -30_000],
    ]);
    expect(await statuses(offer.id)).toEqual(['accepted', 'completed', 'broken']);
    // The whole balance may be paid again.
    expect((await api.POST('/charges', { body: { amount: 40_000, debt_account_id: account.id, card: testCard() } })).response.status).toBe(201);
  });
});
