/**
 * Two instalments of ONE account family due in one batch of due work (a plan on a parent, and a
 * plan on an account moved under it as a child): the family's balance is 50.00, the two
 * instalments ask 30.00 and 40.00. Each is checked counting what the batch reserved before it,
 * so together they never take more than the family owes and no balance falls below 0 - the
 * plan runner's batch (plan-runner.ts) as one at a time would have made it, and the payments'
 * batch reservation (reserve-batch.ts) refusing the one that does not fit. And a plan change on
 * such a child locks its whole family as every writer of balances does (plan-service.ts).
 */
import type { ApiClient } from '../../client';
import { newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import { sandboxTenantOf, type TestApp } from '../support/test-app';
import { outboxEvents, subscribedSandbox } from '../support/webhooks';
import { sandboxToday } from '../support/sandbox-clock';
import { runDueNow } from '../../server/payment-plans/due-work';
import { planPorts } from '../../server/payment-plans/plan-charges';
import { lockFamilies } from '../../server/payments/family-locks';
import { reserveAllOn } from '../../server/payments/reserve-batch';
import { gatewayFor } from '../../server/gateway/gateways';
import { ApiError } from '../../server/kernel/errors';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

async function planOn(accountId: string, methodId: string, amount: number) {
  const { data, response, error } = await api.POST('/payment-plans', {
    body: { debt_account_id: accountId, payment_method_id: methodId, frequency: 'weekly', start_date: await sandboxToday(api), amount },
  });
  if (response.status !== 201) throw new Error(JSON.stringify(error));
  return data!.data;
}

async function accountNow(id: string) {
  // Its balance as stored first (below 0 is what this guards against), then as the API shows it.
  const stored = await app.db('debt_accounts').where({ id }).first('current_balance');
  expect(Number(stored.current_balance)).toBeGreaterThanOrEqual(0);
  const { data, response } = await api.GET('/debt-accounts/{id}', { params: { path: { id } } });
  expect(response.status).toBe(200);
  return data!.data;
}
const planNow = async (id: string) => (await api.GET('/payment-plans/{id}', { params: { path: { id } } })).data!.data;

/**
 * A parent (its child 20.00) with a plan of 40.00, and an account of 30.00 with a plan of 30.00
 * set up alone, then moved under the parent: the family owes 50.00.
 */
async function familyOfTwoPlans() {
  const customer = await newCustomer(api);
  const { data: method } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard() } });
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(api, customer.id, { balance: 0, external_id: parentKey });
  const child = await newDebtAccount(api, customer.id, { balance: 2000, parent_external_id: parentKey });
  const moved = await newDebtAccount(api, customer.id, { balance: 3000, external_id: unique('ACC') });
  const movedPlan = await planOn(moved.id, method!.data.id, 3000);
  const { response } = await api.PUT('/debt-accounts/{id}', { params: { path: { id: moved.id } }, body: { balance: 3000, parent_external_id: parentKey } });
  expect(response.status).toBe(200);
  expect((await accountNow(parent.id)).current_balance).toBe(5000);
  const parentPlan = await planOn(parent.id, method!.data.id, 4000);
  return { parent, child, moved, movedPlan, parentPlan, methodId: method!.data.id };
}

/** Both first instalments due, `first`'s a minute before the other's (the batch's order). */
async function dueInOrder(first: string, second: string) {
  const due = (planId: string, ago: string) => app.db('payment_plan_charges').where({ payment_plan_id: planId, seq: 1 }).update({ due_at: app.db.raw(`now() - interval '${ago}'`) });
  await due(first, '2 minutes');
  await due(second, '1 minute');
}

/** The due work as the job runs it, once, on the real clock; every lock of families counted by batch. */
async function runDueOnce(): Promise<number[]> {
  const ports = planPorts(app.deps);
  const locks: number[] = [];
  const lockAccounts: typeof ports.lockAccounts = (trx, wanted) => (locks.push(wanted.length), ports.lockAccounts(trx, wanted));
  await runDueNow({ ...app.deps, clock: () => new Date() }, { ...ports, lockAccounts, others: [] }, 8);
  return locks;
}

const succeededOn = async (accountIds: string[]) =>
  (await app.db('charges').whereIn('debt_account_id', accountIds).where({ status: 'succeeded' }).select('id', 'amount', 'debt_account_id')).map((row) => ({ ...row, amount: Number(row.amount) }));

test('the child first: 30.00 on it, then the parent\'s 40.00 cut to the 20.00 left; the family at 0, nothing below', async () => {
  const { parent, child, moved, movedPlan, parentPlan } = await familyOfTwoPlans();
  await dueInOrder(movedPlan.id, parentPlan.id);

  const locks = await runDueOnce();
  // One batch: the family locked for both, then read again for the second instalment.
  expect(locks).toEqual([2, 1]);

  for (const id of [moved.id, child.id, parent.id]) expect((await accountNow(id)).current_balance).toBe(0);
  const charges = await succeededOn([parent.id, child.id, moved.id]);
  expect(charges.map((charge) => charge.amount).sort()).toEqual([2000, 3000]);
  expect((await planNow(movedPlan.id)).charges[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  expect((await planNow(parentPlan.id)).charges[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  // Each charge told once, with the amount it took.
  for (const charge of charges) expect((await outboxEvents(app, 'charge.succeeded', charge.id)).map((data) => data.amount)).toEqual([charge.amount]);
}, 120_000);

test('the parent first: its 40.00 reserved, the child\'s instalment waits (not an attempt), and the next run finds the child paid off', async () => {
  const { parent, child, moved, movedPlan, parentPlan } = await familyOfTwoPlans();
  await dueInOrder(parentPlan.id, movedPlan.id);

  await runDueOnce();
  // The parent's 40.00 spread oldest child first: the 20.00 child's all, then 20.00 of the moved account's 30.00.
  const charges = await succeededOn([parent.id, child.id, moved.id]);
  expect(charges.map((charge) => charge.amount)).toEqual([4000]);
  expect((await accountNow(parent.id)).current_balance).toBe(1000);
  expect((await accountNow(child.id)).current_balance).toBe(0);
  expect((await accountNow(moved.id)).current_balance).toBe(1000);
  // The child's instalment was not attempted: the family's balance was all being paid.
  expect((await planNow(movedPlan.id)).charges[0]).toMatchObject({ status: 'pending', attempts: 0 });
  expect(await app.db('charges').where({ payment_plan_id: movedPlan.id }).count({ n: '*' }).first()).toEqual({ n: '0' });

  // The next run: the child's instalment is charged what is left on the child (10.00).
  await runDueOnce();
  expect((await planNow(movedPlan.id)).charges[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  expect((await succeededOn([moved.id])).filter((charge) => charge.amount === 1000)).toHaveLength(1);
  for (const id of [moved.id, child.id, parent.id]) expect((await accountNow(id)).current_balance).toBe(0);
}, 120_000);

test('the payments\' batch reservation counts its earlier charges of a family: the one that does not fit is refused, nothing stored for it', async () => {
  const { parent, moved, movedPlan, parentPlan, methodId } = await familyOfTwoPlans();
  const tenant = sandboxTenantOf(app);
  const instalmentOf = async (planId: string) => (await app.db('payment_plan_charges').where({ payment_plan_id: planId, seq: 1 }).first('id')).id as string;
  const request = async (accountId: string, planId: string, amount: number) => ({
    tenant,
    gateway: (await gatewayFor(app.deps, tenant))!,
    now: new Date(),
    body: { amount, debt_account_id: accountId, payment_method_id: methodId },
    origin: { source: 'payment_plan' as const, payment_plan_id: planId, payment_plan_charge_id: await instalmentOf(planId) },
  });
  const requests = [await request(moved.id, movedPlan.id, 3000), await request(parent.id, parentPlan.id, 4000)];

  const rolledBack = new Error('rolled back');
  const seen = await app.db
    .transaction(async (trx) => {
      const families = await lockFamilies(trx, requests.map((each) => ({ tenant, accountId: each.body.debt_account_id })));
      const results = await reserveAllOn(app.deps, trx, requests.map((each) => ({ ...each, family: families.get(each.body.debt_account_id) })));
      const stored = await trx('charges').whereIn('debt_account_id', [parent.id, moved.id]).where({ status: 'processing' }).select('amount');
      throw Object.assign(rolledBack, { results, stored });
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
      return error as Error & { results: Awaited<ReturnType<typeof reserveAllOn>>; stored: { amount: string }[] };
    });

  expect(seen.results[0]).not.toBeInstanceOf(ApiError);
  expect(seen.results[1]).toBeInstanceOf(ApiError);
  expect((seen.results[1] as ApiError).fieldErrors).toEqual({ amount: ['must be at most the current balance ($20.00)'] });
  expect(seen.stored.map((row) => Number(row.amount))).toEqual([3000]);
}, 120_000);

test('a plan change on a child account locks its family as a charge does: it queues behind a lock on the family\'s head', async () => {
  const { parent, movedPlan } = await familyOfTwoPlans();
  // A charge on the parent holding its family's head.
  const holder = await app.db.transaction();
  const { rows } = await holder.raw<{ rows: { pid: number }[] }>('SELECT pg_backend_pid() AS pid');
  await holder('debt_accounts').where({ id: parent.id }).forUpdate().select('id');
  const change = api.PUT('/payment-plans/{id}', { params: { path: { id: movedPlan.id } }, body: { amount: 2500 } });
  let settled = false;
  const waiting = (async () => {
    while (!settled) {
      const { rows: waiters } = await app.db.raw<{ rows: unknown[] }>('SELECT pid FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))', [rows[0]!.pid]);
      if (waiters.length > 0) return 'queued behind the head';
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return 'never queued';
  })();
  const first = await Promise.race([change.then(() => 'changed while the head was locked'), waiting]);
  settled = true;
  await holder.commit();
  expect(first).toBe('queued behind the head');
  const { response } = await change;
  expect(response.status).toBe(200);
  expect((await planNow(movedPlan.id)).amount).toBe(2500);
}, 120_000);
