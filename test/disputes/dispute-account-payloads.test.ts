/**
 * A debt account's own payloads show its disputes: `debt-account.update` fired as a dispute's
 * hold starts carries it in `active_dispute` and `disputes`, the one fired as it ends carries it
 * closed with `active_dispute` null, and create and update of the account carry them too (an account
 * with disputes cannot be deleted); each
 * payload is checked against the document.
 */
import type { ApiClient } from '../../client';
import type { TestApp } from '../support/test-app';
import { newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

const dispute = async (accountId: string, reason: 'wrong_amount' | 'already_paid' = 'wrong_amount') =>
  (await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: accountId } }, body: { reason, details: `Filed ${reason}` } })).data!.data;
const move = (id: string, status: 'under_review' | 'withdrawn' | 'verified') => api.PUT('/disputes/{id}', { params: { path: { id } }, body: { status } });
const accountUpdates = (accountId: string) => outboxEvents(app, 'debt-account.update', accountId);

test('the update fired as the hold starts carries the dispute in active_dispute and disputes; the one as it ends, none active', async () => {
  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 12_000 });
  expect((await outboxEvents(app, 'debt-account.create', account.id))[0]).toMatchObject({ disputes: [], active_dispute: null });

  const first = await dispute(account.id);
  const [held] = await accountUpdates(account.id);
  expect(held!.active_dispute).toMatchObject({ id: first.id, status: 'pending', reason: 'wrong_amount', details: 'Filed wrong_amount', customer: { id: customer.id }, debt_account: { id: account.id } });
  expect(held!.disputes.map((d: { id: string; status: string }) => [d.id, d.status])).toEqual([[first.id, 'pending']]);

  // A move within the hold changes the dispute, not the hold: no account event.
  await move(first.id, 'under_review');
  expect(await accountUpdates(account.id)).toHaveLength(1);
  await move(first.id, 'withdrawn');
  const ended = (await accountUpdates(account.id))[1]!;
  expect(ended.active_dispute).toBeNull();
  expect(ended.disputes.map((d: { id: string; status: string }) => [d.id, d.status])).toEqual([[first.id, 'withdrawn']]);

  // A second dispute: both listed, oldest first; the open one active. An update of the account says the same.
  const second = await dispute(account.id, 'already_paid');
  await api.PUT('/debt-accounts/{id}', { params: { path: { id: account.id } }, body: { balance: 12_000, external_status: 'disputed' } });
  const updates = await accountUpdates(account.id);
  expect(updates).toHaveLength(4);
  for (const update of updates.slice(2)) {
    expect(update.disputes.map((d: { id: string; status: string }) => [d.id, d.status])).toEqual([
      [first.id, 'withdrawn'],
      [second.id, 'pending'],
    ]);
    expect(update.active_dispute).toMatchObject({ id: second.id, reason: 'already_paid' });
  }
  expect(updates[3]!.external_status).toBe('disputed');

  // Its disputes are records kept (12 CFR 1006.100): the account cannot be deleted, and stays as it was.
  const refused = await api.DELETE('/debt-accounts/{id}', { params: { path: { id: account.id } } });
  expect(refused.response.status).toBe(409);
  expect(refused.error).toMatchObject({ errorCode: 'conflict', error: expect.stringMatching(/closed instead/) });
  expect(await outboxEvents(app, 'debt-account.delete', account.id)).toHaveLength(0);
  expect((await api.GET('/disputes', { params: { query: { debt_account_id: account.id } } })).data!.data.map((d) => d.id).sort()).toEqual([first.id, second.id].sort());
});

test('a disputed child: its own payload lists the dispute, the parent\'s (updated as the hold starts) lists none of its own', async () => {
  const customer = await newCustomer(api);
  const parent = await newDebtAccount(api, customer.id, { external_id: unique('P'), balance: 0 });
  const child = await newDebtAccount(api, customer.id, { external_id: unique('C'), parent_external_id: parent.external_id!, balance: 3_000 });
  const before = (await accountUpdates(parent.id)).length;
  const filed = await dispute(child.id);
  const [childUpdate] = await accountUpdates(child.id);
  expect(childUpdate!.active_dispute).toMatchObject({ id: filed.id });
  const parentUpdates = await accountUpdates(parent.id);
  expect(parentUpdates).toHaveLength(before + 1);
  expect(parentUpdates.at(-1)).toMatchObject({ disputes: [], active_dispute: null });
});
