/**
 * Balances moved set-based (payments/balances.ts `moveBalances`): the accounts of a batch of
 * money in one statement, each by the sum of its own deltas, `paid_off` at 0 and `active` again
 * above it, and every parent they have re-summed and re-flagged in one more — what an agency then
 * reads from GET /debt-accounts/{id}.
 */
import type { ApiClient } from '../../client';
import { newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { moveBalances } from '../../server/payments/balances';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
});
afterAll(async () => app?.stop());

const shown = async (id: string) => {
  const { data } = await api.GET('/debt-accounts/{id}', { params: { path: { id } } });
  return { current_balance: data!.data.current_balance, status: data!.data.status };
};

test('many accounts moved at once: each by its own sum, paid off at 0 and active again above it, every parent re-summed', async () => {
  const customer = await newCustomer(api);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(api, customer.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(api, customer.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(api, customer.id, { balance: 5000, parent_external_id: parentKey });
  const alone = await newDebtAccount(api, customer.id, { balance: 2000 });
  const other = await newDebtAccount(api, customer.id, { balance: 1000 });
  const tenant = sandboxTenantOf(app);

  const moved = await app.db.transaction((trx) =>
    moveBalances(trx, tenant, [
      { debt_account_id: older.id, delta: -3000 },
      { debt_account_id: younger.id, delta: -1000 },
      { debt_account_id: alone.id, delta: -2000 },
      { debt_account_id: alone.id, delta: 500 },
      { debt_account_id: other.id, delta: -1000 },
    ]),
  );
  // The accounts in the order first named, then their parent.
  expect(moved).toEqual([older.id, younger.id, alone.id, other.id, parent.id]);
  expect(await shown(older.id)).toEqual({ current_balance: 0, status: 'paid_off' });
  expect(await shown(younger.id)).toEqual({ current_balance: 4000, status: 'active' });
  expect(await shown(parent.id)).toEqual({ current_balance: 4000, status: 'active' });
  // Named twice: moved by the sum (-2000 + 500), never through 0.
  expect(await shown(alone.id)).toEqual({ current_balance: 500, status: 'active' });
  expect(await shown(other.id)).toEqual({ current_balance: 0, status: 'paid_off' });

  // Given back (a refund): active again, and the parent with it; the younger child paid off takes the parent to 0.
  await app.db.transaction((trx) =>
    moveBalances(trx, tenant, [
      { debt_account_id: other.id, delta: 250 },
      { debt_account_id: younger.id, delta: -4000 },
    ]),
  );
  expect(await shown(other.id)).toEqual({ current_balance: 250, status: 'active' });
  expect(await shown(younger.id)).toEqual({ current_balance: 0, status: 'paid_off' });
  expect(await shown(parent.id)).toEqual({ current_balance: 0, status: 'paid_off' });
  await app.db.transaction((trx) => moveBalances(trx, tenant, [{ debt_account_id: older.id, delta: 700 }]));
  expect(await shown(older.id)).toEqual({ current_balance: 700, status: 'active' });
  expect(await shown(parent.id)).toEqual({ current_balance: 700, status: 'active' });
  // Nothing to move: no statement, nothing moved.
  expect(await app.db.transaction((trx) => moveBalances(trx, tenant, []))).toEqual([]);
}, 60_000);
