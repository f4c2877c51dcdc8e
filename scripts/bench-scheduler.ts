/**
 * npm run bench:scheduler — plan instalments carried out by the due-work job (pg-boss queue
 * `due-work`, the query over due rows, one transaction per instalment with its attempt row,
 * the charge through the payments service and the sandbox gateway, balances and events), per
 * second, against a baseline measured in the same run: the same number of charges of the same
 * amount on as many fresh accounts, made directly through the payments service in a loop (no
 * scheduler, no plan). Prints the process's memory (rss, heap used) before and after the
 * scheduler's run.
 *
 * Seeding is set-based SQL (INSERT … SELECT FROM generate_series): customers, one account each,
 * a saved card each (one sandbox gateway token shared), one active weekly plan each, and its
 * instalments, all already due (their dates in the past, as after a downtime).
 *
 * With `--gateway-latency-ms N` the sandbox answers in N ms (median, SANDBOX_GATEWAY_LATENCY_MS);
 * the loop baseline then takes N ms per charge one after another and is skipped. The last line is
 * one JSON object of the figures: {"bench":"scheduler","gateway_latency_ms","per_second","ratio_to_bare"}
 * (`ratio_to_bare` is null: the bare-SQL baseline is not built yet; the loop's ratio is printed above it).
 *
 *   npm run bench:scheduler [-- --instalments 10000 --accounts 1000 --gateway-latency-ms 0]
 *
 * DATABASE_URL: an existing server (a scratch database is created on it and dropped after);
 * without it, an embedded PostgreSQL of its own under .data/.
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { Knex } from 'knex';
import { loadConfig } from '../server/config';
import { SecretBox } from '../server/crypto/secrets';
import type { AppDeps } from '../server/deps';
import type { Tenant } from '../server/kernel/tenant';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { gatewayFor } from '../server/gateway/gateways';
import { createCharge } from '../server/payments/create-charge';
import { startPlanScheduler } from '../server/payment-plans/plan-scheduler';
import { listenToPayments } from '../server/payment-plans/plan-listeners';
import { planPorts } from '../server/payment-plans/plan-charges';
import { webhookEvents } from '../server/webhooks/outbox';
import { openScratchDatabase } from './scratch-database';

const { values: options } = parseArgs({
  options: { instalments: { type: 'string', default: '10000' }, accounts: { type: 'string', default: '1000' }, 'gateway-latency-ms': { type: 'string', default: '0' } },
});
const LATENCY_MS = Number(options['gateway-latency-ms']);
const INSTALMENTS = Number(options.instalments);
const ACCOUNTS = Number(options.accounts);
const PER_ACCOUNT = Math.ceil(INSTALMENTS / ACCOUNTS);
const AMOUNT = 1000;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function memory(): NodeJS.MemoryUsage {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage();
}

/** `ACCOUNTS` customers with one account of PER_ACCOUNT × AMOUNT and a saved card each; answers the accounts and methods. */
async function seedAccounts(db: Knex, tenant: Tenant, prefix: string, token: string): Promise<{ account_id: string; method_id: string }[]> {
  const org = tenant.organizationId;
  await db.raw(
    `INSERT INTO customers (organization_id, environment, external_id, name, email)
     SELECT :org, 'sandbox', :prefix || '-' || g, 'Bench Payer ' || g, 'payer' || g || '@bench.example' FROM generate_series(1, :n::int) AS g`,
    { org, prefix, n: ACCOUNTS },
  );
  const [location] = (await db.raw(`INSERT INTO locations (organization_id, environment, external_id, name) VALUES (?, 'sandbox', ?, 'Bench Clinic') RETURNING id`, [org, `LOC-${prefix}`])).rows;
  await db.raw(
    `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, external_id, balance, current_balance, status)
     SELECT c.organization_id, c.environment, c.id, :location, c.external_id, :balance::bigint, :balance::bigint, 'active'
       FROM customers c WHERE c.organization_id = :org AND c.environment = 'sandbox' AND c.external_id LIKE :prefix || '-%'`,
    { org, prefix, location: location.id, balance: PER_ACCOUNT * AMOUNT },
  );
  await db.raw(
    `INSERT INTO payment_methods (organization_id, environment, customer_id, type, card_holder, card_last4, card_brand, card_exp_month, card_exp_year, card_zip, gateway_token, is_primary)
     SELECT c.organization_id, c.environment, c.id, 'card', c.name, '4242', 'visa', 8, :year::int, '78704', :token, true
       FROM customers c WHERE c.organization_id = :org AND c.environment = 'sandbox' AND c.external_id LIKE :prefix || '-%'`,
    { org, prefix, token, year: new Date().getUTCFullYear() + 3 },
  );
  const { rows } = await db.raw(
    `SELECT a.id AS account_id, m.id AS method_id FROM debt_accounts a JOIN payment_methods m ON m.customer_id = a.customer_id
      WHERE a.organization_id = ? AND a.external_id LIKE ? || '-%' ORDER BY a.external_id`,
    [org, prefix],
  );
  return rows;
}

/** One active weekly plan per account, and its instalments, all due a week apart in the past. */
async function seedPlans(db: Knex, tenant: Tenant, prefix: string): Promise<void> {
  const org = tenant.organizationId;
  await db.raw(
    `INSERT INTO payment_plans (organization_id, environment, debt_account_id, frequency, start_date, amount, status, payment_method_id, balance_at_enrollment, enrolled_at)
     SELECT a.organization_id, a.environment, a.id, 'weekly', current_date - 7 * :per::int, :amount::bigint, 'active', m.id, a.current_balance, now()
       FROM debt_accounts a JOIN payment_methods m ON m.customer_id = a.customer_id
      WHERE a.organization_id = :org AND a.external_id LIKE :prefix || '-%'`,
    { org, prefix, per: PER_ACCOUNT, amount: AMOUNT },
  );
  await db.raw(
    `INSERT INTO payment_plan_charges (organization_id, environment, payment_plan_id, seq, charge_date, amount, status, due_at)
     SELECT p.organization_id, p.environment, p.id, s, p.start_date + 7 * (s - 1), p.amount, 'pending', (p.start_date + 7 * (s - 1)) + time '14:00' AT TIME ZONE 'UTC'
       FROM payment_plans p, generate_series(1, :per::int) AS s
      WHERE p.organization_id = :org`,
    { org, per: PER_ACCOUNT },
  );
  await db.raw('ANALYZE');
}

const count = async (db: Knex, sql: string) => Number((await db.raw(sql)).rows[0].count);

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-scheduler', 10);
  const { db } = scratch;
  let stopQueue = async () => {};
  try {
    const organization = await createOrganization(db, 'Bench Scheduler Agency');
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: '', clockOffsetMs: 0 };
    const logger = pino({ level: 'warn' });
    const boss = await startQueue(scratch.url, logger);
    stopQueue = () => boss.stop({ graceful: false, wait: true });
    const deps: AppDeps = { config: loadConfig({ PORT: '0', SANDBOX_GATEWAY_LATENCY_MS: String(LATENCY_MS) }), db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(loadConfig({}).dataDir) };
    listenToPayments();
    const gateway = gatewayFor(deps, tenant)!;
    const token = await gateway.tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: new Date().getUTCFullYear() + 3 });

    let started = Date.now();
    await seedAccounts(db, tenant, 'PLAN', token);
    await seedPlans(db, tenant, 'PLAN');
    const baselineAccounts = await seedAccounts(db, tenant, 'ONCE', token);
    const due = await count(db, `SELECT count(*) FROM payment_plan_charges WHERE status = 'pending' AND due_at <= now()`);
    console.log(`database: ${scratch.source}; seeded ${ACCOUNTS} accounts with ${due} due instalments, and ${ACCOUNTS} accounts for the baseline, in ${Date.now() - started} ms`);

    // The scheduler: the due-work job as every server process runs it (the job sent at start).
    const before = memory();
    started = Date.now();
    await startPlanScheduler(deps, planPorts(deps));
    const pending = () => count(db, `SELECT count(*) FROM payment_plan_charges WHERE status = 'pending'`);
    while ((await pending()) > 0) await new Promise((done) => setTimeout(done, 100));
    const schedulerMs = Date.now() - started;
    const after = memory();
    const charged = await count(db, `SELECT count(*) FROM charges WHERE source = 'payment_plan' AND status = 'succeeded'`);
    const attempts = await count(db, 'SELECT count(*) FROM payment_plan_charge_attempts');
    const completed = await count(db, `SELECT count(*) FROM payment_plans WHERE status = 'completed'`);
    if (charged !== due || attempts !== due || completed !== ACCOUNTS) throw new Error(`expected ${due} charges, attempts and ${ACCOUNTS} completed plans; got ${charged}, ${attempts}, ${completed}`);

    const schedulerRate = (due / schedulerMs) * 1000;
    console.log(`scheduler: ${due} instalments over ${ACCOUNTS} accounts in ${(schedulerMs / 1000).toFixed(1)} s: ${schedulerRate.toFixed(0)} instalments/s (every plan completed, one attempt and one charge each; gateway ${LATENCY_MS} ms)`);
    console.log(
      `memory before/after the scheduler's run: rss ${mb(before.rss)} → ${mb(after.rss)}, heap used ${mb(before.heapUsed)} → ${mb(after.heapUsed)}${
        (globalThis as { gc?: unknown }).gc ? ' (after gc)' : ''
      }`,
    );
    const figures = { bench: 'scheduler', gateway_latency_ms: LATENCY_MS, per_second: Math.round(schedulerRate), ratio_to_bare: null };
    if (LATENCY_MS > 0) {
      console.log(JSON.stringify(figures));
      return;
    }
    // The baseline: the same charges made directly through the payments service, one after another.
    started = Date.now();
    for (let round = 0; round < PER_ACCOUNT; round += 1) {
      for (const { account_id, method_id } of baselineAccounts) {
        const { declined } = await createCharge(deps, gateway, tenant, { amount: AMOUNT, debt_account_id: account_id, payment_method_id: method_id }, undefined);
        if (declined) throw declined;
      }
    }
    const baselineMs = Date.now() - started;
    const baselineCount = PER_ACCOUNT * baselineAccounts.length;

    const baselineRate = (baselineCount / baselineMs) * 1000;
    console.log(`baseline:  ${baselineCount} charges through the payments service in a loop in ${(baselineMs / 1000).toFixed(1)} s: ${baselineRate.toFixed(0)} charges/s`);
    console.log(`ratio scheduler/baseline: ${(schedulerRate / baselineRate).toFixed(2)}`);
    console.log(JSON.stringify(figures));
  } finally {
    await stopQueue();
    await scratch.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
