/**
 * The dispute rules the other files leave out: every one of the twenty status moves (seven
 * allowed, thirteen refused, a refused one changing nothing and telling nothing), a dispute on
 * a parent holding its every child, and `within_validation_period` with its hold under the
 * `validation_period` policy on the days around Thanksgiving, Christmas and New Year.
 */
import type { ApiClient, Schemas } from '../../client';
import type { TestApp } from '../support/test-app';
import { newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

type Status = Schemas['DisputeStatus'];

async function disputed(account: Partial<Schemas['DebtAccountCreate']> = {}, dispute: Partial<Schemas['DisputeCreate']> = {}) {
  const customer = await newCustomer(api);
  const created = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 6_000, ...account });
  const { data, response } = await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: created.id } }, body: { reason: 'not_mine', ...dispute } });
  expect(response.status).toBe(201);
  return { account: created, dispute: data!.data };
}

const move = (id: string, status: Status) => api.PUT('/disputes/{id}', { params: { path: { id } }, body: { status } });

// The graph as the issue gives it: pending → under_review or a final status; under_review → a final status; a final status never changes.
const ALLOWED: Record<Status, Status[]> = {
  pending: ['under_review', 'verified', 'resolved', 'withdrawn'],
  under_review: ['verified', 'resolved', 'withdrawn'],
  verified: [],
  resolved: [],
  withdrawn: [],
};
const STATUSES = Object.keys(ALLOWED) as Status[];
const PAIRS = STATUSES.flatMap((from) => STATUSES.filter((to) => to !== from).map((to) => [from, to, ALLOWED[from].includes(to)] as const));

describe('PUT /disputes/{id}: each of the twenty moves (seven allowed, thirteen refused)', () => {
  test.each(PAIRS)('%s → %s: allowed %s', async (from, to, allowed) => {
    const { dispute } = await disputed();
    if (from !== 'pending') expect((await move(dispute.id, from)).response.status).toBe(200);
    const before = (await api.GET('/disputes/{id}', { params: { path: { id: dispute.id } } })).data!.data;
    const told = (await outboxEvents(app, 'debt-account-dispute.update', dispute.id)).length;
    const { response, data, error } = await move(dispute.id, to);
    const after = (await api.GET('/disputes/{id}', { params: { path: { id: dispute.id } } })).data!.data;
    if (allowed) {
      expect(response.status).toBe(200);
      expect(data!.data).toMatchObject({ status: to, hold: to === 'under_review' });
      expect(after.resolved_at === null).toBe(to === 'under_review');
      expect(await outboxEvents(app, 'debt-account-dispute.update', dispute.id)).toHaveLength(told + 1);
    } else {
      expect(response.status).toBe(409);
      expect(error).toMatchObject({ errorCode: 'conflict', error: expect.stringContaining(from) });
      expect(after).toEqual(before);
      expect(await outboxEvents(app, 'debt-account-dispute.update', dispute.id)).toHaveLength(told);
    }
  });
});

test('a dispute on a parent holds the parent and every child until it is answered', async () => {
  const customer = await newCustomer(api);
  const parent = await newDebtAccount(api, customer.id, { external_id: unique('P'), balance: 0 });
  const children = [
    await newDebtAccount(api, customer.id, { external_id: unique('C'), parent_external_id: parent.external_id!, balance: 3_000 }),
    await newDebtAccount(api, customer.id, { external_id: unique('C'), parent_external_id: parent.external_id!, balance: 2_000 }),
  ];
  const methodId = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data.id;
  const charge = (accountId: string) => api.POST('/charges', { body: { debt_account_id: accountId, payment_method_id: methodId, amount: 500 } });
  const dispute = (await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: parent.id } }, body: { reason: 'identity_theft' } })).data!.data;
  for (const id of [parent.id, ...children.map((child) => child.id)]) {
    const refused = await charge(id);
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ errorCode: 'account_disputed' });
  }
  await move(dispute.id, 'verified');
  for (const id of [parent.id, children[1]!.id]) expect((await charge(id)).response.status).toBe(201);
});

test('a settlement offer cannot be accepted while a dispute holds the account, and can be once it is answered', async () => {
  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { external_id: unique('SO'), balance: 20_000 });
  const methodId = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data.id;
  const offer = (await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: account.id } }, body: { name: 'Year-end settlement', discount_percentage: 25, months_period: 0 } as Schemas['SettlementOfferCreate'] })).data!.data;
  const dispute = (await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: account.id } }, body: { reason: 'wrong_amount' } })).data!.data;
  const accept = () => api.POST('/settlement-offers/{id}/accept', { params: { path: { id: offer.id } }, body: { option: 'full_amount', payment_method_id: methodId } });
  const refused = await accept();
  expect(refused.response.status).toBe(409);
  expect(refused.error).toMatchObject({ errorCode: 'account_disputed' });
  expect((await api.GET('/settlement-offers/{id}', { params: { path: { id: offer.id } } })).data!.data.status).toBe('pending');
  await move(dispute.id, 'verified');
  const accepted = await accept();
  expect(accepted.response.status).toBeLessThan(300);
  expect(accepted.data!.data.status).not.toBe('pending');
});

describe('within the validation period, around the holidays (policy validation_period)', () => {
  beforeAll(async () => {
    await api.PUT('/settings', { body: { dispute_hold: 'validation_period' } });
  });
  afterAll(async () => {
    await api.PUT('/settings', { body: { dispute_hold: 'all' } });
  });

  test.each([
    // sent, the period's last day, received, within; why
    ['2025-11-21', '2025-12-31', '2025-12-31T22:30:00Z', true, 'Thanksgiving (Nov 27) not counted: received Dec 1; New Year\'s Eve its last day'],
    ['2025-11-21', '2025-12-31', '2026-01-01T14:00:00Z', false, 'New Year\'s Day is one day late'],
    ['2025-12-19', '2026-01-28', '2026-01-28T12:00:00Z', true, 'Christmas (Dec 25) not counted: received Dec 29'],
    ['2025-12-19', '2026-01-28', '2026-01-29T00:00:00Z', false, 'the day after the period'],
    ['2024-12-27', '2025-02-05', '2025-02-05T09:00:00Z', true, 'New Year\'s Day 2025 not counted: received Jan 6, 2025'],
  ])('sent %s, ends %s, received %s: within %s (%s)', async (sent, endsOn, receivedAt, within) => {
    const { account, dispute } = await disputed({ validation_notice_sent_at: sent }, { received_at: receivedAt });
    const read = (await api.GET('/debt-accounts/{id}', { params: { path: { id: account.id } } })).data!.data;
    expect(read.validation_period_ends_on).toBe(endsOn);
    expect(dispute).toMatchObject({ within_validation_period: within, in_writing: true, hold: within });
    expect(read.active_dispute).toMatchObject({ id: dispute.id, hold: within });
  });
});
