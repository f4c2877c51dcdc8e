/**
 * One rule for locking an account family (payments/balances.ts): the due work's batch lock
 * (family-locks.ts `lockFamilies`) and a single charge's (`lockAccount`) answer the same family
 * with the same facts — children oldest first, a child held by an open dispute, the parent's
 * disputed share — whichever accounts of the family a batch asks for together.
 */
import type { ApiClient } from '../../client';
import { newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { sandboxTenantOf, startTestApp, type TestApp } from '../support/test-app';
import { lockAccount } from '../../server/payments/balances';
import { lockFamilies } from '../../server/payments/family-locks';

let app: TestApp;
let api: ApiClient;
beforeAll(async () => {
  app = await startTestApp();
  api = app.sandbox;
});
afterAll(async () => app?.stop());

test('a batch and a single charge lock a family alike: same children in the same order, same dispute facts', async () => {
  const customer = await newCustomer(api);
  const parentKey = unique('PARENT');
  const parent = await newDebtAccount(api, customer.id, { balance: 0, external_id: parentKey });
  const older = await newDebtAccount(api, customer.id, { balance: 3000, parent_external_id: parentKey });
  const younger = await newDebtAccount(api, customer.id, { balance: 5000, parent_external_id: parentKey });
  const { response } = await api.POST('/debt-accounts/{id}/disputes', { params: { path: { id: younger.id } }, body: { reason: 'wrong_amount' } });
  expect(response.status).toBe(201);
  const tenant = sandboxTenantOf(app);

  const single = await app.db.transaction(async (trx) => Promise.all([parent.id, older.id, younger.id].map(async (id) => [id, await lockAccount(trx, tenant, id)] as const)));
  // The batch asks for the younger child first, then the parent, then the older child.
  const batch = await app.db.transaction((trx) => lockFamilies(trx, [younger.id, parent.id, older.id].map((accountId) => ({ tenant, accountId }))));

  const facts = (family: Awaited<ReturnType<typeof lockAccount>>) => ({
    account: family!.account.id,
    in_dispute: family!.account.in_dispute,
    disputed_share: family!.account.disputed_share,
    reserved_amount: family!.account.reserved_amount,
    children: family!.children.map((child) => ({ id: child.id, held: child.held })),
  });
  for (const [id, family] of single) expect(facts(batch.get(id))).toEqual(facts(family));
  // What both answer for the parent: its children oldest first, the disputed one held (its 50.00 out of what may be charged).
  expect(facts(batch.get(parent.id))).toEqual({
    account: parent.id,
    in_dispute: false,
    disputed_share: 5000,
    reserved_amount: 0,
    children: [
      { id: older.id, held: false },
      { id: younger.id, held: true },
    ],
  });
  expect(facts(batch.get(younger.id))).toMatchObject({ in_dispute: true, children: [] });
}, 60_000);
