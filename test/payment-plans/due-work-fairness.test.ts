/**
 * Due work fair across tenants, on the real database, through the real due-work query, plan
 * runner, payments and sandbox gateway: one organization with 200 due instalments (due first)
 * and another with 10 (due after them all), at most 4 in flight. The small one's instalments are
 * all done before the big one's are, long before; every instalment is charged exactly once.
 */
import type { Knex } from 'knex';
import { createOrganization } from '../../server/organizations/organization-repo';
import { gatewayFor } from '../../server/gateway/gateways';
import type { Tenant } from '../../server/kernel/tenant';
import { runDueNow } from '../../server/payment-plans/due-work';
import { planPorts } from '../../server/payment-plans/plan-charges';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

/** `count` accounts of `tenant`, each with a saved card and an active plan of one instalment, due `minutesAgo` minutes ago. */
async function duePlans(db: Knex, tenant: Tenant, prefix: string, count: number, minutesAgo: number): Promise<void> {
  const org = tenant.organizationId;
  const token = await (await gatewayFor(app.deps, tenant))!.tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: new Date().getUTCFullYear() + 3 });
  await db.raw(
    `INSERT INTO customers (organization_id, environment, external_id, name, email)
     SELECT :org, 'sandbox', :prefix || '-' || g, 'Payer ' || g, 'payer' || g || '@mail.debt-collection.example' FROM generate_series(1, :count::int) AS g`,
    { org, prefix, count },
  );
  const [location] = (await db.raw(`INSERT INTO locations (organization_id, environment, external_id, name) VALUES (?, 'sandbox', ?, 'Clinic') RETURNING id`, [org, `LOC-${prefix}`])).rows;
  await db.raw(
    `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, external_id, balance, current_balance, status)
     SELECT c.organization_id, c.environment, c.id, :location, c.external_id, 5000, 5000, 'active' FROM customers c WHERE c.organization_id = :org`,
    { org, location: location.id },
  );
  await db.raw(
    `INSERT INTO payment_methods (organization_id, environment, customer_id, type, card_holder, card_last4, card_brand, card_exp_month, card_exp_year, card_zip, gateway_token, is_primary)
     SELECT c.organization_id, c.environment, c.id, 'card', c.name, '4242', 'visa', 8, :year::int, '78704', :token, true FROM customers c WHERE c.organization_id = :org`,
    { org, token, year: new Date().getUTCFullYear() + 3 },
  );
  await db.raw(
    `INSERT INTO payment_plans (organization_id, environment, debt_account_id, frequency, start_date, amount, status, payment_method_id, balance_at_enrollment, enrolled_at)
     SELECT a.organization_id, a.environment, a.id, 'weekly', current_date, 5000, 'active', m.id, 5000, now()
       FROM debt_accounts a JOIN payment_methods m ON m.customer_id = a.customer_id WHERE a.organization_id = :org`,
    { org },
  );
  await db.raw(
    `INSERT INTO payment_plan_charges (organization_id, environment, payment_plan_id, seq, charge_date, amount, status, due_at)
     SELECT p.organization_id, p.environment, p.id, 1, current_date, 5000, 'pending', now() - :minutes * interval '1 minute' FROM payment_plans p WHERE p.organization_id = :org`,
    { org, minutes: minutesAgo },
  );
}

test("one organization's 200 due instalments do not hold back another's 10, due after them: the 10 are done first, each instalment charged once", async () => {
  const tenantOf = async (name: string): Promise<Tenant> => ({ organizationId: (await createOrganization(app.db, name)).organization_id, environment: 'sandbox', tokenHash: '' });
  const big = await tenantOf('Big Backlog Agency');
  const small = await tenantOf('Small Agency');
  await duePlans(app.db, big, 'BIG', 200, 30);
  await duePlans(app.db, small, 'SMALL', 10, 1);

  // The order in which instalments end (their answer recorded), by organization.
  const ended: string[] = [];
  const ports = planPorts(app.deps);
  const charge: typeof ports.charge = async (trx, requests) =>
    (await ports.charge(trx, requests)).map((made, index) => {
      if (!('finish' in made)) throw new Error(`not charged: ${made.error}`);
      return { ...made, finish: () => made.finish().then(() => void ended.push(requests[index]!.tenant.organizationId)) };
    });
  // The clock of the test app stands still; the instalments are due on the real one.
  const done = await runDueNow({ ...app.deps, clock: () => new Date() }, { ...ports, charge, others: [] }, 4);

  expect(done).toBe(210);
  expect(ended).toHaveLength(210);
  const lastSmall = ended.lastIndexOf(small.organizationId);
  const lastBig = ended.lastIndexOf(big.organizationId);
  expect(lastSmall).toBeLessThan(lastBig);
  // In turns, not in due order: the ten are done before the big one has done half of its own.
  expect(ended.slice(0, lastSmall + 1).filter((id) => id === big.organizationId).length).toBeLessThan(100);

  const charges = await app.db('charges').whereIn('organization_id', [big.organizationId, small.organizationId]).groupBy('status').select('status').count('* as n');
  expect(charges).toEqual([{ status: 'succeeded', n: '210' }]);
  const instalments = await app.db('payment_plan_charges').whereIn('organization_id', [big.organizationId, small.organizationId]).groupBy('status', 'attempts').select('status', 'attempts').count('* as n');
  expect(instalments).toEqual([{ status: 'succeeded', attempts: 1, n: '210' }]);
}, 120_000);
