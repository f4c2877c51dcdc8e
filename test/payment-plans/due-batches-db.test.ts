/**
 * Due instalments started and recorded in batches (due-work.ts, batches.ts), on the real
 * database through the real query, plan runner, payments and sandbox gateway: instalments of
 * five plans due at once, started in one batch and their answers recorded together, read as
 * one at a time would have made them - two families' charges each spread over the family's
 * children oldest first, a declined card retried later, an instalment held by an
 * open dispute skipped, each attempt recorded once, and each plan's events as a receiver reads
 * them.
 */
import type { ApiClient } from '../../client';
import { newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import type { TestApp } from '../support/test-app';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import { sandboxToday } from '../support/sandbox-clock';
import { runDueNow } from '../../server/payment-plans/due-work';
import { planPorts } from '../../server/payment-plans/plan-charges';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

async function methodOf(customerId: string, number = '4242424242424242'): Promise<string> {
  const { data } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customerId } }, body: { card: testCard(number) } });
  return data!.data.id;
}

async function planOn(accountId: string, methodId: string, amount: number) {
  const { data, response, error } = await api.POST('/payment-plans', {
    body: { debt_account_id: accountId, payment_method_id: methodId, frequency: 'weekly', start_date: await sandboxToday(api), amount },
  });
  if (response.status !== 201) throw new Error(JSON.stringify(error));
  return data!.data;
}

const accountNow = async (id: string) => (await api.GET('/debt-accounts/{id}', { params: { path: { id } } })).data!.data;
const planNow = async (id: string) => (await api.GET('/payment-plans/{id}', { params: { path: { id } } })).data!.data;

test('five plans due at once, in one batch: each as one at a time would have made it, every attempt once', async () => {
  // A parent with two children, its plan on the parent.
  const family = await newCustomer(api);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(api, family.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(api, family.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(api, family.id, { balance: 5000, parent_external_id: parentKey });
  const parentPlan = await planOn(parent.id, await methodOf(family.id), 4000);
  // Another family (two families of one batch, locked in one order).
  const other = await newCustomer(api);
  const otherKey = unique('PARENT');
  const otherParent = await newDebtAccount(api, other.id, { balance: 0, external_id: otherKey });
  const child = await newDebtAccount(api, other.id, { balance: 6000, parent_external_id: otherKey });
  const sibling = await newDebtAccount(api, other.id, { balance: 1000, parent_external_id: otherKey });
  const childPlan = await planOn(otherParent.id, await methodOf(other.id), 3000);
  // Stand-alone accounts: a good card, a declined card, an open dispute.
  const plain = async (number?: string) => {
    const customer = await newCustomer(api);
    const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 10_000 });
    return { account, plan: await planOn(account.id, await methodOf(customer.id, number), 2500) };
  };
  const good = await plain();
  const declined = await plain('4000000000000002');
  const disputed = await plain();
  const { response } = await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: disputed.account.id } }, body: { reason: 'wrong_amount' } });
  expect(response.status).toBe(201);

  const plans = [parentPlan, childPlan, good.plan, declined.plan, disputed.plan];
  await app.db('payment_plan_charges').whereIn('payment_plan_id', plans.map((plan) => plan.id)).where({ seq: 1 }).update({ due_at: app.db.raw(`now() - interval '1 minute'`) });
  // The batches as the job makes them; the clock of the test app stands still, the instalments are due on the real one.
  const ports = planPorts(app.deps);
  // Each batch of starts locks its families once: the five in one.
  const locks: number[] = [];
  const lockAccounts: typeof ports.lockAccounts = (trx, wanted) => (locks.push(wanted.length), ports.lockAccounts(trx, wanted));
  // 16 in flight: batches of up to 8 (half the flow, due-work.ts dueBatchFor), so the five go in one.
  const done = await runDueNow({ ...app.deps, clock: () => new Date() }, { ...ports, lockAccounts, others: [] }, 16);
  expect(done).toBe(5);
  expect(locks).toEqual([5]);

  // The parent's 40.00: the older child's 30.00, then 10.00 of the younger's.
  expect((await accountNow(older.id)).current_balance).toBe(0);
  expect((await accountNow(younger.id)).current_balance).toBe(4000);
  expect((await accountNow(parent.id)).current_balance).toBe(4000);
  expect((await accountNow(child.id)).current_balance).toBe(3000);
  expect((await accountNow(sibling.id)).current_balance).toBe(1000);
  expect((await accountNow(otherParent.id)).current_balance).toBe(4000);
  expect((await accountNow(good.account.id)).current_balance).toBe(7500);
  expect((await accountNow(declined.account.id)).current_balance).toBe(10_000);
  expect((await accountNow(disputed.account.id)).current_balance).toBe(10_000);

  const first = async (planId: string) => (await planNow(planId)).charges[0]!;
  for (const plan of [parentPlan, childPlan, good.plan]) expect(await first(plan.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
  // Declined: due again later (a retry), the decline told.
  expect(await first(declined.plan.id)).toMatchObject({ status: 'pending', attempts: 1 });
  expect((await planNow(declined.plan.id)).status).toBe('active');
  // Held by the dispute: skipped, nothing charged.
  expect(await first(disputed.plan.id)).toMatchObject({ status: 'skipped', attempts: 0 });

  const attempts = await app.db('payment_plan_charge_attempts')
    .join('payment_plan_charges as i', 'i.id', 'payment_plan_charge_attempts.payment_plan_charge_id')
    .whereIn('i.payment_plan_id', plans.map((plan) => plan.id))
    .select('i.payment_plan_id', 'payment_plan_charge_attempts.attempt', 'payment_plan_charge_attempts.outcome');
  expect(attempts.map((row) => [row.payment_plan_id, row.attempt, row.outcome]).sort()).toEqual(
    [
      [parentPlan.id, 1, 'paid'],
      [childPlan.id, 1, 'paid'],
      [good.plan.id, 1, 'paid'],
      [declined.plan.id, 1, 'failed'],
    ].sort(),
  );

  const chargeOf = async (planId: string): Promise<string> => (await app.db('payment_plan_charges').where({ payment_plan_id: planId, seq: 1 }).first('charge_id')).charge_id;
  // What a receiver reads: each charge told once, and each plan's update after its instalment's answer.
  for (const plan of [parentPlan, childPlan, good.plan]) {
    const charge = await chargeOf(plan.id);
    expect(await outboxEvents(app, 'charge.succeeded', charge)).toHaveLength(1);
    const updates = await outboxEvents(app, 'payment-plan.update', (data) => data.id === plan.id);
    expect(updates.at(-1)!.charges[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  }
  expect(await outboxEvents(app, 'charge.failed', await chargeOf(declined.plan.id))).toHaveLength(1);
}, 120_000);
