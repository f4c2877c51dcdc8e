/**
 * Acceptance that a crash cannot split, and what is left set up when its charge goes away
 * (tag Settlement offers): the offer's move to `accepted` commits with the charge's reservation
 * or with the plan, so a process stopped after the reservation (TEST_CHARGE_STEP) leaves the
 * offer accepted with its charge `processing`, and the recovery of charges finishes it, the
 * offer following: released (never received) → `pending` again; taken → `completed`. A
 * scheduled charge of an offer canceled puts the offer back to `pending` (or `expired`).
 */
import type { ApiClient, Schemas } from '../../client';
import { recoverCharges } from '../../server/payments/charge-recovery';
import { accountOf, accountWithCard } from '../support/fixtures';
import { advanceSandbox, DAY, sandboxDayAfter, sandboxNow, sandboxToday } from '../support/sandbox-clock';
import { eventually, outboxEvents, subscribedSandbox } from '../support/webhooks';
import type { TestApp } from '../support/test-app';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());
const answerWait = () => app.config.gatewayAnswerWaitMs;
let waitMs: number;
beforeEach(() => {
  waitMs = answerWait();
});
afterEach(() => {
  app.config.testChargeSteps = [];
  app.config.gatewayAnswerWaitMs = waitMs;
});

async function offerOn(accountId: string, body: Record<string, unknown>) {
  const { data, response, error } = await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: accountId } }, body: body as Schemas['SettlementOfferCreate'] });
  if (response.status !== 201) throw new Error(`offer failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}
const accept = (id: string, body: Record<string, unknown>) => api.POST('/settlement-offers/{id}/accept', { params: { path: { id } }, body: body as Schemas['SettlementOfferAccept'] });
const read = async (id: string) => (await api.GET('/settlement-offers/{id}', { params: { path: { id } } })).data!.data;
const chargeOf = async (id: string) => (await api.GET('/charges/{id}', { params: { path: { id } } })).data!.data;
const statuses = async (offerId: string) => (await outboxEvents(app, 'debt-account-settlement-offer.update', offerId)).map((data) => data.status);
const transactions = async (accountId: string) =>
  (await api.GET('/transactions', { params: { query: { debt_account_id: accountId, limit: 100 } } })).data!.data.map((row) => [row.type, row.status, row.amount]).sort();

/**
 * Accepts in full, the process stopping at `step` of the charge of `cents` (it never records
 * the answer). Stopped after the reservation, the request never answers; after the gateway's
 * answer, it answers once GATEWAY_ANSWER_WAIT_MS passed, with the charge still processing.
 */
async function acceptStoppedAt(step: 'reserved' | 'answered', cents: number, offerId: string, methodId: string) {
  app.config.testChargeSteps = [{ step, action: 'pause', cents }];
  // The process says on stderr where it stopped.
  const said: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    said.push(String(chunk));
    return true;
  });
  const stopped = new AbortController();
  const request = api
    .POST('/settlement-offers/{id}/accept', { params: { path: { id: offerId } }, body: { option: 'full_amount', payment_method_id: methodId }, signal: stopped.signal })
    .catch(() => undefined);
  const charge = await eventually(() => app.db('charges').where({ amount: cents, status: 'processing' }).first('id'), 'the charge reserved');
  try {
    await eventually(() => said.some((line) => line.includes(`TEST_CHARGE_STEP paused at ${step} ${charge.id}`)), `the process stopped at ${step}`);
  } finally {
    spy.mockRestore();
  }
  // Only this charge stops (the next process to take one would not).
  app.config.testChargeSteps = [];
  if (step === 'answered') {
    const answered = await request;
    expect(answered?.data?.data).toMatchObject({ status: 'accepted', charge_id: charge.id });
  } else {
    // The caller gives up on a request that will never answer (its connection closes).
    stopped.abort();
  }
  return charge.id as string;
}

describe('a process stopped between the steps of the charge', () => {
  test('after the reservation: the offer is accepted with its charge processing; recovery releases the charge and the offer is pending again', async () => {
    const { account, methodId } = await accountWithCard(api, 40_102);
    const offer = await offerOn(account.id, { discounted_amount: 30_101, months_period: 0 });
    const chargeId = await acceptStoppedAt('reserved', 30_101, offer.id, methodId);
    // Committed together: the move, the link, and the reservation with the settlement's source.
    expect(await read(offer.id)).toMatchObject({ status: 'accepted', accepted_option: 'full_amount', charge_id: chargeId });
    expect(await chargeOf(chargeId)).toMatchObject({ status: 'processing', source: 'settlement_offer', amount: 30_101 });

    expect(await recoverCharges(app.deps, 0)).toBe(1);
    expect(await chargeOf(chargeId)).toMatchObject({ status: 'failed', error_code: 'processing_error' });
    expect(await read(offer.id)).toMatchObject({ status: 'pending', accepted_at: null, accepted_option: null, charge_id: null });
    expect(await statuses(offer.id)).toEqual(['accepted', 'pending']);
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 40_102, status: 'active' });
    const [failed] = await outboxEvents(app, 'charge.failed', chargeId);
    // Recorded as the charge failed, before the offer moved: it names the offer it was to pay.
    expect(failed).toMatchObject({ source: 'settlement_offer', debt_account_settlement_offer: { id: offer.id, status: 'accepted' } });

    // Nothing was taken: the debtor accepts again, and it settles.
    const again = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId });
    expect(again.data!.data).toMatchObject({ status: 'completed' });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
  });

  test('after the gateway took it: recovery records the charge and the offer completes, the rest written off exactly', async () => {
    const { account, methodId } = await accountWithCard(api, 50_203);
    const offer = await offerOn(account.id, { discounted_amount: 40_202, months_period: 0 });
    app.config.gatewayAnswerWaitMs = 100;
  const chargeId = await acceptStoppedAt('answered', 40_202, offer.id, methodId);
  // The gateway took it (its answer may come after the request gave up waiting).
  expect(await eventually(() => app.db('sandbox_payments').where({ amount: 40_202 }).first('status'), 'the gateway answered')).toMatchObject({ status: 'succeeded' });
    expect(await read(offer.id)).toMatchObject({ status: 'accepted', charge_id: chargeId });

    expect(await recoverCharges(app.deps, 0)).toBe(1);
    expect(await read(offer.id)).toMatchObject({ status: 'completed', charge_id: chargeId });
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 0, status: 'paid_off' });
    expect(await transactions(account.id)).toEqual([
      ['charge', 'succeeded', 40_202],
      ['settlement_write_off', 'succeeded', 10_001],
    ]);
    expect(await statuses(offer.id)).toEqual(['accepted', 'completed']);
    // The charge's events name the settlement and its source.
    const [succeeded] = await outboxEvents(app, 'charge.succeeded', chargeId);
    expect(succeeded).toMatchObject({ source: 'settlement_offer', source_name: 'Settlement offer', debt_account_settlement_offer: { id: offer.id, discounted_amount: 40_202 } });
    expect(succeeded!.transaction).toMatchObject({ source: 'settlement_offer', debt_account_settlement_offer: { id: offer.id } });
  });
});

test('a plan that cannot be made leaves the offer pending, and it was never accepted (one transaction)', async () => {
  const { account, methodId } = await accountWithCard(api, 60_000);
  const plan = await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxDayAfter(api, 3), amount: 10_000 } });
  expect(plan.response.status).toBe(201);
  const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 3 });
  const refused = await accept(offer.id, { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxToday(api) });
  expect(refused.response.status).toBe(409);
  expect(await read(offer.id)).toMatchObject({ status: 'pending', accepted_at: null, payment_plan_id: null });
  expect(await statuses(offer.id)).toEqual([]);
});

describe('the scheduled charge of an accepted offer canceled (POST /charges/{id}/cancel)', () => {
  test('the offer is pending again, the whole balance owed; the debtor may accept it again', async () => {
    const { account, methodId } = await accountWithCard(api, 30_000);
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 0 });
    const accepted = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 5) });
    const chargeId = accepted.data!.data.charge_id!;
    expect(await chargeOf(chargeId)).toMatchObject({ status: 'scheduled', source: 'settlement_offer' });

    const canceled = await api.POST('/charges/{id}/cancel', { params: { path: { id: chargeId } } });
    expect(canceled.data!.data.status).toBe('canceled');
    expect(await read(offer.id)).toMatchObject({ status: 'pending', accepted_at: null, accepted_option: null, charge_id: null });
    expect(await statuses(offer.id)).toEqual(['accepted', 'pending']);
    const [deleted] = await outboxEvents(app, 'scheduled-charge.delete', chargeId);
    expect(deleted).toMatchObject({ source: 'settlement_offer', settlement_offer: { id: offer.id } });
    const [created] = await outboxEvents(app, 'scheduled-charge.create', chargeId);
    expect(created).toMatchObject({ source: 'settlement_offer', settlement_offer: { id: offer.id, status: 'accepted' } });
    // The settled sum is no longer what is asked: a payment of more than it is taken (and supersedes the offer).
    const more = await api.POST('/charges', { body: { amount: 15_001, debt_account_id: account.id, payment_method_id: methodId } });
    expect(more.response.status).toBe(201);
    expect((await read(offer.id)).status).toBe('superseded');
  });

  test('after its expires_at passed: the offer is expired', async () => {
    const { account, methodId } = await accountWithCard(api, 30_000);
    const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 0, expires_at: new Date((await sandboxNow(api)).getTime() + 2 * DAY).toISOString() });
    const accepted = await accept(offer.id, { option: 'full_amount', payment_method_id: methodId, scheduled_at: await sandboxDayAfter(api, 6) });
    await advanceSandbox(api, 3);
    // Accepted offers do not expire: only what they fall back to does.
    expect((await read(offer.id)).status).toBe('accepted');
    await api.POST('/charges/{id}/cancel', { params: { path: { id: accepted.data!.data.charge_id! } } });
    expect(await read(offer.id)).toMatchObject({ status: 'expired', charge_id: null });
    expect((await read(offer.id)).ended_at).not.toBeNull();
    expect(await accountOf(api, account.id)).toMatchObject({ current_balance: 30_000 });
  });
});
