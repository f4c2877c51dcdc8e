/**
 * What settlement offers tell webhooks: `debt-account-settlement-offer.create` on creation and
 * `.update` on every status move, in the document's payload shape; debt account payloads name
 * the pending and the accepted offer; a payment method that an accepted offer charges says so
 * (in a charge's payload too).
 */
import type { ApiClient, Schemas } from '../../client';
import { accountWithCard } from '../support/fixtures';
import { sandboxToday } from '../support/sandbox-clock';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import type { TestApp } from '../support/test-app';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

async function offerOn(accountId: string, body: Record<string, unknown>) {
  const { data } = await api.POST('/debt-accounts/{id}/settlement-offers', { params: { path: { id: accountId } }, body: body as Schemas['SettlementOfferCreate'] });
  return data!.data;
}
const accept = (id: string, body: Record<string, unknown>) => api.POST('/settlement-offers/{id}/accept', { params: { path: { id } }, body: body as Schemas['SettlementOfferAccept'] });

test('create, then each move (accepted, completed) is an event; the account payload names the offer; the charge is in it', async () => {
  const { account, methodId } = await accountWithCard(api, 40_000);
  const offer = await offerOn(account.id, { name: 'Spring settlement', discount_percentage: 25, months_period: 0 });
  const [created] = await outboxEvents(app, 'debt-account-settlement-offer.create', offer.id);
  expect(created).toMatchObject({ id: offer.id, name: 'Spring settlement', status: 'pending', amount: 40_000, discount: 10_000, discounted_amount: 30_000, total_amount: 30_000, months_period: null, has_payment_plan: false, charges: [] });
  const accountEvents = await outboxEvents(app, 'debt-account.update', account.id);
  expect(accountEvents.find((data) => data.settlement_offer)).toMatchObject({ settlement_offer: { id: offer.id, status: 'pending' }, accepted_debt_account_settlement_offer: null });

  await accept(offer.id, { option: 'full_amount', payment_method_id: methodId });
  const updates = await outboxEvents(app, 'debt-account-settlement-offer.update', offer.id);
  expect(updates.map((data) => data.status)).toEqual(['accepted', 'completed']);
  expect(updates[1]!.charges).toHaveLength(1);
  expect(updates[1]!.charges[0]).toMatchObject({ amount: 30_000, source: 'settlement_offer', success: true });
  // Events of one transaction share its time: the settled account is the one at balance 0.
  const last = (await outboxEvents(app, 'debt-account.update', account.id)).find((data) => data.current_balance === 0)!;
  expect(last).toMatchObject({ current_balance: 0, status: 'paid_off', settlement_offer: null, accepted_debt_account_settlement_offer: { id: offer.id, status: 'completed' } });
  expect(last.transactions.map((row: { type_id: number; amount_cents: number }) => [row.type_id, row.amount_cents])).toEqual(expect.arrayContaining([[8, 10_000]]));
});

test('a plan paying an offer: the update shows it, and its payment method has an active settlement offer', async () => {
  const { account, methodId, customer } = await accountWithCard(api, 60_000);
  const offer = await offerOn(account.id, { discount_percentage: 50, months_period: 3 });
  await accept(offer.id, { option: 'payment_plan', payment_method_id: methodId, frequency: 'monthly', start_date: await sandboxToday(api) });
  const updates = await outboxEvents(app, 'debt-account-settlement-offer.update', offer.id);
  expect(updates.at(-1)).toMatchObject({ status: 'accepted', has_payment_plan: true, months_period: 3, payment_plan: { status: 'active', amount: 10_000 } });
  expect(updates.at(-1)!.payment_plan.payment_method).toMatchObject({ id: methodId, has_active_settlement_offer: true });
  await api.PUT('/customers/{id}', { params: { path: { id: customer.id } }, body: { name: 'Maria G. Gonzalez' } });
  const [customerEvent] = (await outboxEvents(app, 'customer.update', customer.id)).slice(-1);
  expect(customerEvent!.payment_methods.find((method: { id: string }) => method.id === methodId)).toMatchObject({ has_active_settlement_offer: true });
  // A charge made with that method tells the same of it.
  const paid = (await api.POST('/charges', { body: { amount: 500, debt_account_id: account.id, payment_method_id: methodId } })).data!.data;
  const [charged] = await outboxEvents(app, 'charge.succeeded', paid.id);
  expect(charged!.payment_method).toMatchObject({ id: methodId, has_active_payment_plan: true, has_active_settlement_offer: true, has_active_scheduled_charge: false });
});

test('revoked and superseded: each a .update with its status', async () => {
  const { account, methodId } = await accountWithCard(api, 20_000);
  const revoked = await offerOn(account.id, { discount_percentage: 10, months_period: 0 });
  await api.POST('/settlement-offers/{id}/revoke', { params: { path: { id: revoked.id } } });
  const superseded = await offerOn(account.id, { discount_percentage: 10, months_period: 0 });
  await api.POST('/charges', { body: { amount: 500, debt_account_id: account.id, payment_method_id: methodId } });
  expect((await outboxEvents(app, 'debt-account-settlement-offer.update', revoked.id)).map((data) => data.status)).toEqual(['revoked']);
  expect((await outboxEvents(app, 'debt-account-settlement-offer.update', superseded.id)).map((data) => data.status)).toEqual(['superseded']);
});
