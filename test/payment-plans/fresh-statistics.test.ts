/**
 * The statistics of the tables the due work grows are refreshed once they lag (fresh-statistics.ts):
 * a thousand instalments more than the planner knew of, and the table is analyzed; then it is
 * current, and nothing is analyzed again.
 */
import type { ApiClient } from '../../client';
import type { TestApp } from '../support/test-app';
import { subscribedSandbox } from '../support/webhooks';
import { newCustomer, newDebtAccount, testCard, unique } from '../support/fixtures';
import { sandboxToday } from '../support/sandbox-clock';
import { analyzeStaleTables } from '../../server/payment-plans/fresh-statistics';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => ({ app, api } = await subscribedSandbox()));
afterAll(async () => app?.stop());

const analyzedAt = async (table: string): Promise<Date | null> =>
  (await app.db.raw('SELECT greatest(last_analyze, last_autoanalyze) AS at FROM pg_stat_user_tables WHERE relname = ?', [table])).rows[0].at;

test('a table of instalments 1,100 rows larger than its statistics is analyzed, then left alone', async () => {
  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { external_id: unique('ACC'), balance: 10_000 });
  const method = (await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard('4242424242424242') } })).data!.data.id;
  const plan = (
    await api.POST('/payment-plans', { body: { debt_account_id: account.id, payment_method_id: method, frequency: 'weekly', start_date: await sandboxToday(api), amount: 2500 } })
  ).data!.data;
  await analyzeStaleTables(app.db);
  // 1,100 more instalments of the plan, their counts sent to the statistics at once (else within a second).
  await app.db.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO payment_plan_charges (organization_id, environment, payment_plan_id, seq, charge_date, amount, status)
       SELECT organization_id, environment, payment_plan_id, seq + n, charge_date + n * 7, amount, 'canceled'
         FROM payment_plan_charges, generate_series(1000, 2099) AS n WHERE payment_plan_id = ? AND seq = 1`,
      [plan.id],
    );
    await trx.raw('SELECT pg_stat_force_next_flush()');
  });
  const before = await analyzedAt('payment_plan_charges');

  expect(await analyzeStaleTables(app.db)).toContain('payment_plan_charges');
  const after = await analyzedAt('payment_plan_charges');
  expect(after).not.toBeNull();
  expect(after!.getTime()).toBeGreaterThan(before?.getTime() ?? 0);
  expect(await analyzeStaleTables(app.db)).not.toContain('payment_plan_charges');
});
