/**
 * The payloads of one recording share their parts (built-once.ts): each account, charge,
 * transaction, plan and method is built once and shown wherever it appears. Sharing must not
 * change a byte: every payload of a recording is compared with the same payload built alone,
 * with nothing kept between its parts.
 */
import { newCustomer, testCard, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { kindOf } from '../../server/event-payloads/event-kinds';
import { loadPayloadRows, noNeeds, type PayloadRows } from '../../server/event-payloads/payload-reads';
import type { EventName } from '../../server/events/events';
import type { Tenant } from '../../server/kernel/tenant';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ paymentGateway: 'sandbox' });
});
afterAll(async () => {
  await app?.stop();
});

/** A memo that keeps nothing: every part is built anew wherever it appears, as before sharing. */
class KeepsNothing extends Map<string, unknown> {
  override set(): this {
    return this;
  }
}

test('the payloads of a recording are the bytes of each payload built alone', async () => {
  const tenant: Tenant = { organizationId: app.organization.organization_id, environment: 'production', tokenHash: '' };
  const customer = await newCustomer(app.api, { address: { postal_code: '78704', line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX' }, metadata: { branch: 'north' } });
  const parentKey = unique('ACC');
  const base = { customer_id: customer.id, location_id: unique('LOC'), location_name: 'Lakeside Medical Center' };
  const parent = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 0, external_id: parentKey, metadata: { desk: 'b' } } })).data!.data;
  const older = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 30_000, parent_external_id: parentKey } })).data!.data;
  const younger = (await app.api.POST('/debt-accounts', { body: { ...base, balance: 50_000, parent_external_id: parentKey } })).data!.data;
  const method = (await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } })).data!.data;
  const start = new Date(app.clock.now().getTime() + 86_400_000).toISOString().slice(0, 10);
  const plan = await app.api.POST('/payment-plans', { body: { debt_account_id: parent.id, payment_method_id: method.id, frequency: 'weekly', start_date: start, amount: 10_000 } });
  expect([plan.response.status, plan.error]).toEqual([201, undefined]);
  const charges: string[] = [];
  for (const amount of [4000, 2500]) {
    const made = await app.api.POST('/charges', { body: { amount, debt_account_id: parent.id, payment_method_id: method.id } });
    expect(made.response.status).toBe(201);
    charges.push(made.data!.data.id);
  }
  await app.api.POST('/charges/{id}/refund', { params: { path: { id: charges[0]! } }, body: { amount: 1500 } });
  const scheduled = await app.api.POST('/charges', { body: { amount: 1200, debt_account_id: older.id, payment_method_id: method.id, scheduled_at: start } });
  expect(scheduled.response.status).toBe(201);

  const recorded: { name: EventName; ids: string[] }[] = [
    { name: 'charge.succeeded', ids: charges },
    { name: 'debt-account.update', ids: [parent.id, older.id, younger.id] },
    { name: 'payment-plan.update', ids: [parent.id] },
    { name: 'customer.update', ids: [customer.id] },
    { name: 'scheduled-charge.create', ids: [scheduled.data!.data.id] },
  ];
  const together = await app.db.transaction(async (trx) => {
    const needs = noNeeds();
    for (const event of recorded) for (const id of event.ids) kindOf(event.name).need(needs, id);
    const rows = await loadPayloadRows(trx, tenant, needs);
    const built = recorded.flatMap((event) => event.ids.map((id) => kindOf(event.name).build(id, rows, tenant)));
    return { rows, built };
  });
  const alone = (name: EventName, id: string, rows: PayloadRows) => kindOf(name).build(id, { ...rows, built: new KeepsNothing() }, tenant);
  const each = recorded.flatMap((event) => event.ids.map((id) => JSON.stringify(alone(event.name, id, together.rows))));

  expect(together.built.map((data) => JSON.stringify(data))).toEqual(each);
  expect(each.every((text) => text.length > 2)).toBe(true);
  // And the parts are shared: the charge told by charge.succeeded is the one the parent's debt-account.update lists.
  const [firstCharge, , parentUpdate] = together.built as { id: string; charges?: unknown[] }[];
  expect(parentUpdate!.charges).toContain(firstCharge);
});
