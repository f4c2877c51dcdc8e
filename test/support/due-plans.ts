/** Due instalments seeded with set-based SQL, for tests of the due work on a real database. */
import type { Knex } from 'knex';
import type { AppDeps } from '../../server/deps';
import { gatewayFor } from '../../server/gateway/gateways';
import type { Tenant } from '../../server/kernel/tenant';

/**
 * `count` accounts of the sandbox `tenant`, each with a saved card (4242…, tokenized by the
 * simulator) and an active plan of one instalment of 50.00, due `minutesAgo` minutes ago.
 */
export async function seedDuePlans(deps: AppDeps, db: Knex, tenant: Tenant, prefix: string, count: number, minutesAgo = 1): Promise<void> {
  const org = tenant.organizationId;
  const token = await (await gatewayFor(deps, tenant))!.tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: new Date().getUTCFullYear() + 3 });
  await db.raw(
    `INSERT INTO customers (organization_id, environment, external_id, name, email)
     SELECT :org, 'sandbox', :prefix || '-' || g, 'Payer ' || g, 'payer' || g || '@mail.debt-collection.example' FROM generate_series(1, :count::int) AS g`,
    { org, prefix, count },
  );
  const [location] = (await db.raw(`INSERT INTO locations (organization_id, environment, external_id, name) VALUES (?, 'sandbox', ?, 'Clinic') RETURNING id`, [org, `LOC-${prefix}`])).rows;
  const ofPrefix = `c.organization_id = :org AND c.external_id LIKE :prefix || '-%'`;
  await db.raw(
    `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, external_id, balance, current_balance, status)
     SELECT c.organization_id, c.environment, c.id, :location, c.external_id, 5000, 5000, 'active' FROM customers c WHERE ${ofPrefix}`,
    { org, prefix, location: location.id },
  );
  await db.raw(
    `INSERT INTO payment_methods (organization_id, environment, customer_id, type, card_holder, card_last4, card_brand, card_exp_month, card_exp_year, card_zip, gateway_token, is_primary)
     SELECT c.organization_id, c.environment, c.id, 'card', c.name, '4242', 'visa', 8, :year::int, '78704', :token, true FROM customers c WHERE ${ofPrefix}`,
    { org, prefix, token, year: new Date().getUTCFullYear() + 3 },
  );
  await db.raw(
    `INSERT INTO payment_plans (organization_id, environment, debt_account_id, frequency, start_date, amount, status, payment_method_id, balance_at_enrollment, enrolled_at)
     SELECT a.organization_id, a.environment, a.id, 'weekly', current_date, 5000, 'active', m.id, 5000, now()
       FROM debt_accounts a JOIN payment_methods m ON m.customer_id = a.customer_id JOIN customers c ON c.id = a.customer_id WHERE ${ofPrefix}`,
    { org, prefix },
  );
  await db.raw(
    `INSERT INTO payment_plan_charges (organization_id, environment, payment_plan_id, seq, charge_date, amount, status, due_at)
     SELECT p.organization_id, p.environment, p.id, 1, current_date, 5000, 'pending', now() - :minutes * interval '1 minute'
       FROM payment_plans p JOIN debt_accounts a ON a.id = p.debt_account_id JOIN customers c ON c.id = a.customer_id WHERE ${ofPrefix}`,
    { org, prefix, minutes: minutesAgo },
  );
}
