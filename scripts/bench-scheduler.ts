/**
 * npm run bench:scheduler — plan instalments carried out per second by the due-work job (pg-boss
 * queue `due-work`, the flow over due rows in batches: the instalments that start together are
 * started in one short transaction, the sandbox gateway asked for each in its own, the answers
 * that arrive together recorded in one: balances, events, the plans), with the process's memory
 * (rss, heap used) before and after the run.
 *
 * At `--gateway-latency-ms 0`, the same run also measures the bare-SQL baseline
 * (bench-scheduler-bare.ts): the same rows for as many instalments of another organization, made
 * by hand-written set-based SQL through the same batcher (the same batch size, as many batches
 * at once), so in the same number of transactions, as many in flight, on a pool of the same
 * size; the rows each made are counted table by table and must match, and the statements and
 * transactions per instalment of each are printed (counted as sent on a knex connection, so
 * also what runs on one without knex: pg-boss's SQL in a transaction, COPY), with this
 * process's CPU per instalment and how busy its event loop was during each run, and (on the embedded
 * PostgreSQL) the database's CPU per instalment, every backend's: figures that hold on a loaded machine;
 * then both added up, with the most ours could reach against bare at bare's use of the cores. The bytes this process
 * read and wrote per instalment (/proc/self/io) and the JSON text of the events' payloads per
 * instalment are printed beside them: the work each path asks of this process, not a rate. `ratio_to_bare` = ours / bare. At a latency
 * above 0 the ratio is null (the baseline has no gateway to wait for).
 *
 * Seeding is set-based SQL (INSERT … SELECT FROM generate_series): customers, one account each,
 * a saved card each (one sandbox gateway token shared), one active weekly plan each, and its
 * instalments, all already due (their dates in the past, as after a downtime).
 *
 *   npm run bench:scheduler [-- --instalments 10000 --accounts 1000 --gateway-latency-ms 0 --in-flight 64 --bare-payloads rows]
 *
 * `--bare-payloads rows|documented`: the baseline's event payloads, row dumps (the default: a
 * ceiling, lighter than ours) or ours built by the database (the same rows, checked, but slower
 * than our job: no ceiling); bench-scheduler-bare.ts says why.
 * `--in-flight` is DUE_WORK_CHARGES_IN_FLIGHT (default its default, 64); the pool is the
 * server's (DATABASE_POOL_MAX, 20 unless set). One process at 64 in flight and 300 ms cannot
 * pass 64 / 0.3 s ≈ 213 instalments/s: the goal at 300 ms (≥ 300/s) is measured with
 * `--in-flight 128` in one process, an operator's setting (a deployment of N processes has N ×
 * DUE_WORK_CHARGES_IN_FLIGHT in flight). `--top-statements` prints on stderr, at exit, the 30
 * statements that took the most time in all, the statements sent on the pool's connections
 * without knex, and the tables
 * sequentially scanned during each run (pg_stat_user_tables: rows read, scans). Both runs are polled alike until none of their instalments is pending (one probe
 * of an index every 200 ms, a count every 5 s). DATABASE_PREPARED_STATEMENTS=false runs the
 * statements unnamed, as it does the server's. During both runs the statistics of the tables the
 * due work grows are kept fresh (fresh-statistics.ts), as the due work keeps them.
 *
 * `--processor NAME` (PROCESSORS below: `sandbox`, `stripe`) is the processor charged, and `--rate-limit N`
 * paces it at N requests/s through the limiter every process shares (gateway/processor-pace.ts,
 * the due work waiting for its room): the requests it received are counted by second, as each is
 * sent to it (Stripe: by the local server itself, as each arrives, during the scheduler's run
 * only), and `over_limit` is how many passed N in their second; `lost` the instalments neither
 * paid nor failed, plus any charged twice (Stripe: also by the server's PaymentIntents). The
 * limit counts requests, `per_second` instalments (a charge each): the requests per charge the
 * processor received (`requests_per_charge`), the most charges a second the limit allows with
 * them (`bound_per_second`: a Stripe charge is two requests, create then confirm, so at most 50
 * a second at 100 requests/s), and the requests the pace sends in one second at most
 * (`pace_slots_per_second`: none in a second's last GUARD_MS, 96 at 100/s) are printed.
 *
 *   npm run bench:scheduler -- --processor stripe --rate-limit 100 --gateway-latency-ms 300 --instalments 20000 --accounts 2000
 *
 * The last line is one JSON object of the figures: {"bench":"scheduler","processor","per_second",
 * "over_limit","lost","rate_limit","requests_per_charge","bound_per_second","pace_slots_per_second",
 * "gateway_latency_ms","ratio_to_bare","bare_payloads"}.
 *
 * DATABASE_URL: an existing server (a scratch database is created on it and dropped after);
 * without it, an embedded PostgreSQL of its own under .data/.
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { treeCpuMs } from './measure';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { Knex } from 'knex';
import { countStatements } from './statement-count';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import type { AppDeps } from '../server/deps';
import type { Tenant } from '../server/kernel/tenant';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { gatewayFor } from '../server/gateway/gateways';
import type { PaymentGateway } from '../server/gateway/gateway';
import { paceOf, pacedGateway } from '../server/gateway/paced-gateway';
import { paymentProcessorService } from '../server/payment-processors/processor-service';
import { fork, type ChildProcess } from 'node:child_process';
import { GUARD_MS, processorPace, type ProcessorPace } from '../server/gateway/processor-pace';
import { startPlanScheduler } from '../server/payment-plans/plan-scheduler';
import { listenToPayments } from '../server/payment-plans/plan-listeners';
import { listenForSettlements } from '../server/settlement-offers/offer-listeners';
import { listenToCheckouts } from '../server/portal/checkout-charges';
import { listenToAutopayCharges } from '../server/autopay/autopay-outcome';
import { planPorts } from '../server/payment-plans/plan-charges';
import { webhookEvents } from '../server/webhooks/outbox';
import { openScratchDatabase } from './scratch-database';
import { bareInstalments, type BarePayloads } from './bench-scheduler-bare';
import { eventShapes, SAMPLE_ACCOUNTS, shapeDifferences, storedBodyText } from './bench-scheduler-events';
import { DUE_WORK_CHARGES_IN_FLIGHT } from '../server/payment-plans/due-work';
import { keepStatisticsFresh } from '../server/payment-plans/fresh-statistics';

const { values: options } = parseArgs({
  options: {
    instalments: { type: 'string', default: '10000' },
    accounts: { type: 'string', default: '1000' },
    'gateway-latency-ms': { type: 'string', default: '0' },
    'in-flight': { type: 'string', default: String(DUE_WORK_CHARGES_IN_FLIGHT) },
    'top-statements': { type: 'boolean', default: false },
    'bare-payloads': { type: 'string', default: 'rows' },
    processor: { type: 'string', default: 'sandbox' },
    'rate-limit': { type: 'string' },
  },
});
const LATENCY_MS = Number(options['gateway-latency-ms']);
const INSTALMENTS = Number(options.instalments);
const ACCOUNTS = Number(options.accounts);
if (options['bare-payloads'] !== 'rows' && options['bare-payloads'] !== 'documented') throw new Error(`--bare-payloads is rows or documented, not ${options['bare-payloads']}`);
const BARE_PAYLOADS: BarePayloads = options['bare-payloads'];
const PER_ACCOUNT = Math.ceil(INSTALMENTS / ACCOUNTS);
const AMOUNT = 1000;
const IN_FLIGHT = Number(options['in-flight']);
/** Requests per second the processor takes (its pace, shared through PostgreSQL); unset: unpaced. */
const RATE_LIMIT = options['rate-limit'] === undefined ? undefined : Number(options['rate-limit']);
if (RATE_LIMIT !== undefined && !(RATE_LIMIT > 0)) throw new Error(`--rate-limit is a number of requests per second, not ${options['rate-limit']}`);

/**
 * The processors the bench can charge, by `--processor`: the adapter serving a tenant (its
 * requests are counted, and paced at `--rate-limit`, around it), and what it needs started (a
 * local server). Another processor is one more entry here.
 */
interface BenchProcessor {
  /**
   * The adapter serving `tenant`; with `slots: 'per-request'` it takes a slot of `pace` for each
   * HTTP request it sends. One the real dispatch paced already (paceOf) is counted at its own
   * pace, keyed by its configuration, not at `pace`.
   */
  gateway(deps: AppDeps, tenant: Tenant, pace?: ProcessorPace): Promise<PaymentGateway>;
  /** `per-call` (the default): one slot per call of the port; `per-request`: the adapter takes its own (several requests per call). */
  slots?: 'per-call' | 'per-request';
  /** Starts what the processor needs (a local server of its API): how to stop it, and the environment that points the server's configuration at it. */
  start?(): Promise<{ stop: () => Promise<void>; env: Record<string, string> }>;
  /** The requests the processor itself received between `from` and `until` (ms), by second of their arrival (a local server's count); else they are counted per call of the port. */
  received?(from: number, until: number): Promise<Map<number, number>>;
  /** The processor's own record against ours (`succeeded`: our charges recorded paid): payments it took twice for one of our charges, and those it took that we did not record. */
  reconcile?(succeeded: Set<string>): Promise<{ doubled: number; unrecorded: number }>;
}

/**
 * Stripe, through the real adapter and the real dispatch: the local Stripe server
 * (test/support/stripe-server.ts, answering after `--gateway-latency-ms`) on STRIPE_API_URL, the
 * organization's processor saved as PUT /payment-processor saves it (a test-mode key, checked by
 * its one harmless call; its rate `--rate-limit`, else Stripe's test-mode default), so that
 * gatewayFor builds the adapter as it does for any organization: a slot of the pace keyed by the
 * configuration's id for each HTTP request (a charge is a PaymentIntent created, then confirmed:
 * two requests). The requests are counted by the server, by their arrival.
 */
function stripeProcessor(): BenchProcessor {
  const secretKey = `sk_test_bench${randomBytes(12).toString('hex')}`;
  let server: ChildProcess | undefined;
  const saved = new Set<string>();
  /** One answer of the server's process (scripts/stripe-server-process.ts) to `ask`. */
  const asked = <T>(ask: object, type: string) =>
    new Promise<T>((done) => {
      const answer = (message: { type: string }) => {
        if (message.type !== type) return;
        server!.off('message', answer);
        done(message as T);
      };
      server!.on('message', answer);
      server!.send(ask);
    });
  return {
    slots: 'per-request',
    async start() {
      // In a process of its own: a processor stamps arrivals on its own clock, never on the
      // sender's busy event loop (which, stalled, would bunch requests sent in time into one second).
      server = fork(resolve(__dirname, 'stripe-server-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const ready = asked<{ url: string }>({ latencyMs: LATENCY_MS, secretKey }, 'ready');
      const { url } = await ready;
      return {
        stop: async () => {
          const exited = new Promise((done) => server!.once('exit', done));
          server!.send({ type: 'close' });
          await exited;
        },
        env: { STRIPE_API_URL: url },
      };
    },
    async gateway(deps, tenant) {
      if (!saved.has(tenant.organizationId)) {
        await paymentProcessorService(deps).set(tenant, {
          processor: 'stripe',
          credentials: { secret_key: secretKey, webhook_secret: `whsec_${randomBytes(24).toString('base64')}` },
          ...(RATE_LIMIT === undefined ? {} : { rate_limit_per_second: RATE_LIMIT }),
        });
        saved.add(tenant.organizationId);
      }
      return (await gatewayFor(deps, tenant))!;
    },
    async received(from, until) {
      const { bySecond } = await asked<{ bySecond: [number, number][] }>({ type: 'received', from, until }, 'received');
      return new Map(bySecond);
    },
    async reconcile(succeeded) {
      const { intents } = await asked<{ intents: { charge_id?: string; status: string }[] }>({ type: 'intents' }, 'intents');
      const taken = new Map<string, number>();
      for (const { charge_id: id, status } of intents) if (id && status === 'succeeded') taken.set(id, (taken.get(id) ?? 0) + 1);
      let doubled = 0;
      let unrecorded = 0;
      for (const [id, n] of taken) {
        doubled += n - 1;
        if (!succeeded.has(id)) unrecorded += 1;
      }
      return { doubled, unrecorded };
    },
  };
}

const PROCESSORS: Record<string, () => BenchProcessor> = {
  sandbox: () => ({ gateway: async (deps, tenant) => (await gatewayFor(deps, tenant))! }),
  stripe: stripeProcessor,
};
const PROCESSOR = options.processor!;
const processor = (PROCESSORS[PROCESSOR] ?? (() => { throw new Error(`--processor is one of ${Object.keys(PROCESSORS).join(', ')}, not ${PROCESSOR}`); }))();
/** The server's pool (DATABASE_POOL_MAX, or its default). */
const POOL = loadConfig().databasePoolMax;

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

/**
 * What this process does from now: its CPU (user and system) per item, and the share of the
 * time its event loop was busy. Under load they hold better than a rate; a loop idle half the
 * time waits on the database (round trips in sequence, batches waiting on each other).
 */
function processWork() {
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  const io = bytesMoved();
  return {
    per(items: number) {
      const used = process.cpuUsage(cpu);
      const moved = bytesMoved();
      return {
        cpuMs: (used.user + used.system) / 1000 / items,
        busy: Math.round(performance.eventLoopUtilization(loop).utilization * 100),
        readKb: moved && io ? (moved.read - io.read) / 1024 / items : undefined,
        writtenKb: moved && io ? (moved.written - io.written) / 1024 / items : undefined,
      };
    },
  };
}

/**
 * Bytes this process has read and written so far (/proc/self/io: its sockets to the database,
 * mostly), undefined without /proc. What the driver parses and builds grows with them: the
 * rows read back for the events' payloads, the bodies sent.
 */
function bytesMoved(): { read: number; written: number } | undefined {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    return { read: Number(/^rchar: (\d+)/m.exec(io)?.[1]), written: Number(/^wchar: (\d+)/m.exec(io)?.[1]) };
  } catch {
    return undefined;
  }
}

/**
 * The JSON text of the events' payloads an organization's run recorded, in kB per instalment:
 * ours are built in this process and stored compressed (event-body.ts), the baseline's are
 * built by the database from the rows and stored as their text.
 */
async function payloadKb(db: Knex, org: string, items: number): Promise<number> {
  const { rows } = await db.raw<{ rows: { body: Buffer }[] }>('SELECT body FROM webhook_events WHERE organization_id = ?', [org]);
  let bytes = 0;
  for (const { body } of rows) bytes += Buffer.byteLength(storedBodyText(body));
  return bytes / 1024 / items;
}

/**
 * CPU seconds the embedded PostgreSQL of this run has used so far (its postmaster, the backends
 * it reaped and those alive), read from /proc; undefined on a DATABASE_URL server or without
 * /proc. Unlike a rate, CPU per instalment holds on a loaded machine.
 */
function databaseCpuSeconds(): number | undefined {
  const ms = treeCpuMs(join(resolve(__dirname, '..'), '.data', `bench-scheduler-${process.pid}`));
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

const count = async (db: Knex, sql: string, bindings: readonly Knex.RawBinding[] = []) => Number((await db.raw(sql, bindings)).rows[0].count);

/** Rows of `org`, table by table (every table with an organization_id): what a run made. */
async function rowsOf(db: Knex, org: string): Promise<Record<string, number>> {
  const tables: string[] = (
    await db.raw(`SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'organization_id' ORDER BY table_name`)
  ).rows.map((row: { table_name: string }) => row.table_name);
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const n = await count(db, `SELECT count(*) FROM ${table} WHERE organization_id = ?`, [org]);
    if (n > 0) counts[table] = n;
  }
  return counts;
}

/** Sequential scans so far, table by table (pg_stat_user_tables: rows they read, and how many). */
async function seqScans(db: Knex): Promise<Map<string, { scans: number; rows: number }>> {
  // Statistics are flushed by each backend at most once a second: wait for them.
  await new Promise((done) => setTimeout(done, 1100));
  const rows: { relname: string; seq_scan: string; seq_tup_read: string }[] = (await db.raw('SELECT relname, seq_scan, seq_tup_read FROM pg_stat_user_tables')).rows;
  return new Map(rows.map((row) => [row.relname, { scans: Number(row.seq_scan), rows: Number(row.seq_tup_read) }]));
}

/** The tables sequentially scanned between two seqScans(), most rows read first. */
function scannedSince(after: Map<string, { scans: number; rows: number }>, before: Map<string, { scans: number; rows: number }>): string {
  return [...after]
    .map(([table, { scans, rows }]) => ({ table, scans: scans - (before.get(table)?.scans ?? 0), rows: rows - (before.get(table)?.rows ?? 0) }))
    .filter(({ rows }) => rows > 0)
    .sort((a, b) => b.rows - a.rows)
    .map(({ table, scans, rows }) => `${table} ${rows} rows in ${scans} scans`)
    .join(', ');
}

/**
 * Until no instalment of `org` is pending, every 200 ms; the bare baseline is polled the same
 * way while it runs. Whether one is left is one probe of the partial index of pending
 * instalments (payment_plan_charges_due, in its order); how many are left (to stop when nothing
 * moves for a minute) is counted every 5 s only: a count every 200 ms read every pending row and
 * loaded the database being measured.
 */
async function whilePending(db: Knex, org: string, done: () => boolean = () => false): Promise<void> {
  const anyLeft = async () =>
    (await db.raw(`SELECT 1 FROM payment_plan_charges WHERE status = 'pending' AND organization_id = ? ORDER BY due_at LIMIT 1`, [org])).rows.length > 0;
  const left = () => count(db, `SELECT count(*) FROM payment_plan_charges WHERE organization_id = ? AND status = 'pending'`, [org]);
  let last = -1;
  let movedAt = Date.now();
  let countedAt = 0;
  while (!done() && (await anyLeft())) {
    if (Date.now() - countedAt >= 5000) {
      const n = await left();
      countedAt = Date.now();
      if (n !== last) [last, movedAt] = [n, Date.now()];
      // Stops with an error when nothing moves for a minute (a failing job is retried, not fixed).
      if (Date.now() - movedAt > 60_000) throw new Error(`no progress for a minute with ${n} instalments pending`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).flatMap(([table, n]) => (n - (before[table] ?? 0) > 0 ? [[table, n - (before[table] ?? 0)]] : [])));

async function main(): Promise<void> {
  // DATABASE_PREPARED_STATEMENTS=false runs every statement unnamed, as the server would.
  const scratch = await openScratchDatabase('bench-scheduler', POOL, { preparedStatements: loadConfig().databasePreparedStatements });
  const { db } = scratch;
  let stopQueue = async () => {};
  const stopAll: (() => Promise<void>)[] = [];
  let summary: string | undefined;
  try {
    const logger = pino({ level: 'warn' });
    const boss = await startQueue(scratch.url, logger);
    stopQueue = () => boss.stop({ graceful: false, wait: true });
    // The processor's local server first: the configuration points the adapter at it (STRIPE_API_URL).
    const local = await processor.start?.();
    if (local) stopAll.push(local.stop);
    const config = loadConfig({ PORT: '0', SANDBOX_GATEWAY_LATENCY_MS: String(LATENCY_MS), DUE_WORK_CHARGES_IN_FLIGHT: String(IN_FLIGHT), ...local?.env });
    const deps: AppDeps = { config, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(loadConfig({}).dataDir) };
    // The listeners the worker process registers (server/workers.ts), so that each answer does what it does in production.
    listenToPayments();
    listenForSettlements();
    listenToCheckouts();
    listenToAutopayCharges(deps);
    // Statements sent, to compare what each path asks of the database per instalment: counted
    // where they leave for the server (countStatements), not by knex's `query` event, which
    // misses what runs on a knex connection directly (pg-boss's SQL in a transaction, COPY).
    let statements = 0;
    let transactions = 0;
    const unseen = new Map<string, number>();
    /** Statements knex told of (its `query` event) and not yet seen sent, by text. */
    const seenByKnex = new Map<string, number>();
    countStatements((sql) => {
      statements += 1;
      if (/^\s*BEGIN/i.test(sql)) transactions += 1;
      if (!options['top-statements']) return;
      const told = seenByKnex.get(sql) ?? 0;
      if (told > 0) return void (told === 1 ? seenByKnex.delete(sql) : seenByKnex.set(sql, told - 1));
      const text = sql.replace(/\s+/g, ' ').slice(0, 110);
      unseen.set(text, (unseen.get(text) ?? 0) + 1);
    });
    const startedAt = new Map<string, number>();
    const spent = new Map<string, { n: number; ms: number }>();
    db.on('query', (q: { __knexQueryUid: string; sql: string }) => {
      if (!options['top-statements']) return;
      seenByKnex.set(q.sql, (seenByKnex.get(q.sql) ?? 0) + 1);
      startedAt.set(q.__knexQueryUid, performance.now());
    });
    db.on('query-response', (_r: unknown, q: { __knexQueryUid: string; sql: string }) => {
      const t = startedAt.get(q.__knexQueryUid);
      if (t === undefined) return;
      startedAt.delete(q.__knexQueryUid);
      const sql = q.sql.replace(/\s+/g, ' ').slice(0, 110);
      const entry = spent.get(sql) ?? spent.set(sql, { n: 0, ms: 0 }).get(sql)!;
      entry.n += 1;
      entry.ms += performance.now() - t;
    });
    // --top-statements: where the database's time went (on stderr at exit, the last line stays the JSON).
    process.on('exit', () => {
      if (!options['top-statements']) return;
      for (const [sql, { n, ms }] of [...spent].sort((a, b) => b[1].ms - a[1].ms).slice(0, 30)) console.error(`${ms.toFixed(0).padStart(8)} ms ${String(n).padStart(7)}× ${sql}`);
      console.error('statements sent on the pool\'s connections without knex (both runs):');
      for (const [sql, n] of [...unseen].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.error(`${String(n).padStart(7)}× ${sql}`);
    });
    const seeded = async (name: string) => {
      const organization = await createOrganization(db, name);
      const tenant: Tenant = { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: '', clockOffsetMs: 0 };
      const token = await (await processor.gateway(deps, tenant)).tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: new Date().getUTCFullYear() + 3 });
      await seedAccounts(db, tenant, 'PLAN', token);
      await seedPlans(db, tenant, 'PLAN');
      return tenant;
    };

    // The requests the processor received, by second (as each is sent to it), while the scheduler runs.
    const received = new Map<number, number>();
    let receiving = true;
    const counted = (gateway: PaymentGateway): PaymentGateway => {
      const count = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => (...args: A): Promise<R> => {
        if (receiving) received.set(Math.floor(Date.now() / 1000), (received.get(Math.floor(Date.now() / 1000)) ?? 0) + 1);
        return call(...args);
      };
      return {
        name: gateway.name,
        tokenizeCard: count(gateway.tokenizeCard.bind(gateway)),
        tokenizeBankAccount: count(gateway.tokenizeBankAccount.bind(gateway)),
        charge: count(gateway.charge.bind(gateway)),
        void: count(gateway.void.bind(gateway)),
        refund: count(gateway.refund.bind(gateway)),
        find: count(gateway.find.bind(gateway)),
        outcome: count(gateway.outcome.bind(gateway)),
      };
    };
    let pace: ProcessorPace | undefined = RATE_LIMIT === undefined ? undefined : processorPace(db, `bench:${PROCESSOR}`, RATE_LIMIT);
    const processorGateways = async (of: AppDeps, tenant: Tenant) => {
      const adapter = await processor.gateway(of, tenant, pace);
      // Paced by the real dispatch already (keyed by the configuration's id): that pace is the one measured and admitted by.
      const own = paceOf(adapter);
      if (own) pace = own;
      const gateway = counted(adapter);
      return pace ? pacedGateway(gateway, pace, { slots: own ? 'per-request' : (processor.slots ?? 'per-call') }) : gateway;
    };

    let started = Date.now();
    const ours = await seeded('Bench Scheduler Agency');
    // The baseline has no processor to wait for: measured at 0 ms, unpaced.
    const bare = LATENCY_MS === 0 && RATE_LIMIT === undefined ? await seeded('Bench Bare SQL Agency') : undefined;
    const due = await count(db, `SELECT count(*) FROM payment_plan_charges WHERE organization_id = ? AND status = 'pending' AND due_at <= now()`, [ours.organizationId]);
    console.log(
      `database: ${scratch.source}, pool ${POOL}; seeded ${ACCOUNTS} accounts with ${due} due instalments${bare ? ', and as many for the bare-SQL baseline' : ''}, in ${Date.now() - started} ms; ${IN_FLIGHT} in flight; gateway ${PROCESSOR}, ${LATENCY_MS} ms${RATE_LIMIT === undefined ? '' : `, paced at ${RATE_LIMIT}/s`}`,
    );

    // The bare-SQL baseline first (ours then runs on tables as large as it found them, or larger).
    let bareRate: number | undefined;
    let bareRows: Record<string, number> = {};
    let bareStatements = 0;
    let bareTransactions = 0;
    let bareWork: ReturnType<ReturnType<typeof processWork>['per']> | undefined;
    let bareDbMs: number | undefined;
    if (bare) {
      const before = await rowsOf(db, bare.organizationId);
      const scansBefore = options['top-statements'] ? await seqScans(db) : undefined;
      started = Date.now();
      statements = 0;
      transactions = 0;
      const work = processWork();
      const dbCpu = databaseCpuSeconds();
      let finished = false;
      const polling = whilePending(db, bare.organizationId, () => finished);
      // The planner as well informed as ours will be (the due work keeps these statistics fresh).
      let stopFreshStatistics = () => {};
      keepStatisticsFresh(db, logger, (stop) => (stopFreshStatistics = stop));
      const made = await bareInstalments(db, bare.organizationId, IN_FLIGHT, BARE_PAYLOADS).finally(() => {
        finished = true;
        stopFreshStatistics();
      });
      await polling;
      bareStatements = statements / made;
      bareTransactions = transactions / made;
      const bareMs = Date.now() - started;
      bareWork = work.per(made);
      const dbCpuAfter = databaseCpuSeconds();
      bareDbMs = dbCpu === undefined || dbCpuAfter === undefined ? undefined : ((dbCpuAfter - dbCpu) * 1000) / made;
      if (scansBefore) console.error(`sequential scans during the bare run (the poll's included): ${scannedSince(await seqScans(db), scansBefore) || 'none'}`);
      bareRows = minus(await rowsOf(db, bare.organizationId), before);
      bareRate = (made / bareMs) * 1000;
      console.log(`bare SQL:  ${made} instalments in ${(bareMs / 1000).toFixed(1)} s: ${bareRate.toFixed(0)} instalments/s`);
    }

    // The scheduler: the due-work job as every server process runs it (the job sent at start).
    const rowsBefore = await rowsOf(db, ours.organizationId);
    const scansBefore = options['top-statements'] ? await seqScans(db) : undefined;
    const before = memory();
    statements = 0;
    transactions = 0;
    started = Date.now();
    const work = processWork();
    const dbCpu = databaseCpuSeconds();
    // How late this process's own timers ran (the pace's callers wake on them; printed below).
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    await startPlanScheduler(deps, planPorts(deps, processorGateways));
    await whilePending(db, ours.organizationId);
    loopDelay.disable();
    const schedulerMs = Date.now() - started;
    const schedulerEnded = Date.now();
    receiving = false;
    const ourWork = work.per(due);
    const dbCpuAfter = databaseCpuSeconds();
    const ourDbMs = dbCpu === undefined || dbCpuAfter === undefined ? undefined : ((dbCpuAfter - dbCpu) * 1000) / due;
    if (scansBefore) console.error(`sequential scans during the scheduler's run (the poll's included): ${scannedSince(await seqScans(db), scansBefore) || 'none'}`);
    const ourStatements = statements / due;
    const ourTransactions = transactions / due;
    const after = memory();
    const charged = await count(db, `SELECT count(*) FROM charges WHERE organization_id = ? AND source = 'payment_plan' AND status = 'succeeded'`, [ours.organizationId]);
    const attempts = await count(db, 'SELECT count(*) FROM payment_plan_charge_attempts WHERE organization_id = ?', [ours.organizationId]);
    const completed = await count(db, `SELECT count(*) FROM payment_plans WHERE organization_id = ? AND status = 'completed'`, [ours.organizationId]);
    // Lost: instalments neither recorded (paid) nor failed, and any charged twice.
    const unrecorded = await count(db, `SELECT count(*) FROM payment_plan_charges WHERE organization_id = ? AND status NOT IN ('succeeded', 'failed')`, [ours.organizationId]);
    const doubled = await count(
      db,
      `SELECT coalesce(sum(n - 1), 0) AS count FROM (SELECT count(*) AS n FROM charges WHERE organization_id = ? AND source = 'payment_plan' AND status = 'succeeded' GROUP BY payment_plan_charge_id HAVING count(*) > 1) twice`,
      [ours.organizationId],
    );
    // The processor's own record: a payment it took twice for one charge of ours, or took and we did not record.
    const paid = new Set<string>(
      (await db.raw(`SELECT id FROM charges WHERE organization_id = ? AND source = 'payment_plan' AND status = 'succeeded'`, [ours.organizationId])).rows.map((row: { id: string }) => row.id),
    );
    const atProcessor = (await processor.reconcile?.(paid)) ?? { doubled: 0, unrecorded: 0 };
    if (processor.reconcile) console.log(`the processor's own payments against ours: ${atProcessor.doubled} taken twice for one charge, ${atProcessor.unrecorded} taken and not recorded paid`);
    const lost = unrecorded + doubled + atProcessor.doubled + atProcessor.unrecorded;
    if (charged !== due || attempts !== due || completed !== ACCOUNTS || lost > 0) {
      console.error(
        `expected ${due} charges, attempts and ${ACCOUNTS} completed plans, none lost; got ${charged}, ${attempts}, ${completed}; ${unrecorded} unrecorded, ${doubled} charged twice; ` +
          `at the processor ${atProcessor.doubled} taken twice, ${atProcessor.unrecorded} taken and not recorded`,
      );
      process.exitCode = 1;
    }
    // The scheduler's run only (not the seeding's tokenization).
    const byProcessor = (await processor.received?.(started, schedulerEnded)) ?? received;
    const seconds = [...byProcessor.keys()].sort((a, b) => a - b);
    const counts = seconds.map((second) => byProcessor.get(second)!);
    const overLimit = RATE_LIMIT === undefined ? null : counts.reduce((over, n) => over + Math.max(0, n - Math.floor(RATE_LIMIT)), 0);
    // The whole seconds between the first and the last (those two are partly idle).
    const whole = counts.slice(1, -1).sort((a, b) => a - b);
    console.log(
      `the processor received ${counts.reduce((a, b) => a + b, 0)} requests over ${seconds.length} seconds: per whole second median ${whole[Math.floor(whole.length / 2)] ?? '-'}, ` +
        `least ${whole[0] ?? '-'}, most ${whole.at(-1) ?? '-'}${RATE_LIMIT === undefined ? '' : `; ${overLimit} over the limit of ${RATE_LIMIT}/s`}`,
    );
    console.log(
      `this process's event loop during the run: delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms, max ${(loopDelay.max / 1e6).toFixed(0)} ms` +
        `${processor.received ? ' (the local server counts arrivals in a process of its own)' : ''}`,
    );
    if (pace) {
      const { statements, granted, late } = pace.stats();
      console.log(`the pace (PostgreSQL): ${statements} statements for ${granted} slots (${(statements / Math.max(1, granted)).toFixed(2)} per slot), ${late} slots given up by a caller woken too late for its second`);
    }

    const schedulerRate = (due / schedulerMs) * 1000;
    console.log(`scheduler: ${due} instalments over ${ACCOUNTS} accounts in ${(schedulerMs / 1000).toFixed(1)} s: ${schedulerRate.toFixed(0)} instalments/s (every plan completed, one attempt and one charge each)`);
    // per_second counts instalments (one charge each); the limit counts requests: at R requests
    // per charge, as the processor saw them, N requests/s allow at most N / R charges/s.
    const requestsPerCharge = counts.reduce((a, b) => a + b, 0) / Math.max(1, due);
    const boundPerSecond = RATE_LIMIT === undefined ? null : Math.floor(RATE_LIMIT / requestsPerCharge);
    // The slots the pace hands out in one second: none in its last GUARD_MS (room to arrive within it).
    const paceSlots = RATE_LIMIT === undefined ? null : Math.ceil((1_000_000 - GUARD_MS * 1000) / Math.ceil(1_000_000 / RATE_LIMIT));
    if (boundPerSecond !== null) {
      console.log(
        `the limit counts requests, per_second charges: the processor saw ${requestsPerCharge.toFixed(2)} requests per charge` +
          `${PROCESSOR === 'stripe' ? ' (a Stripe charge is a PaymentIntent created, then confirmed: two requests, so that a lost answer can never take money unrecorded)' : ''}, ` +
          `so ${RATE_LIMIT} requests/s carry at most ${boundPerSecond} charges/s` +
          `${boundPerSecond < 95 ? ` (a goal of 95/s is beyond that bound by design: it needs at most ${(RATE_LIMIT! / 95).toFixed(2)} requests per charge at this limit)` : ''}; ` +
          `the pace sends at most ${paceSlots} requests in a second (none in its last ${GUARD_MS} ms, so that each arrives within it), so ${Math.floor(paceSlots! / requestsPerCharge)} charges/s in practice`,
      );
    }
    console.log(
      `memory before/after the scheduler's run: rss ${mb(before.rss)} → ${mb(after.rss)}, heap used ${mb(before.heapUsed)} → ${mb(after.heapUsed)}${
        (globalThis as { gc?: unknown }).gc ? ' (after gc)' : ''
      }`,
    );
    let ratio: number | null = null;
    if (bareRate !== undefined) {
      const ourRows = minus(await rowsOf(db, ours.organizationId), rowsBefore);
      console.log(`rows made, table by table: ours ${JSON.stringify(ourRows)}; bare ${JSON.stringify(bareRows)}`);
      if (JSON.stringify(ourRows) !== JSON.stringify(bareRows)) console.log('WARNING: the bare-SQL baseline did not make the same rows as ours');
      console.log(`statements per instalment (the gateway's included): ours ${ourStatements.toFixed(1)}, bare ${bareStatements.toFixed(1)}`);
      console.log(`this process per instalment: CPU ours ${ourWork.cpuMs.toFixed(2)} ms, bare ${bareWork!.cpuMs.toFixed(2)} ms; event loop busy ours ${ourWork.busy}%, bare ${bareWork!.busy}% of the run`);
      const kb = (n: number | undefined) => (n === undefined ? '?' : n.toFixed(1));
      const ourPayloadKb = await payloadKb(db, ours.organizationId, due);
      const barePayloadKb = await payloadKb(db, bare!.organizationId, due);
      console.log(
        `this process's bytes per instalment: read ours ${kb(ourWork.readKb)} kB, bare ${kb(bareWork!.readKb)} kB; written ours ${kb(ourWork.writtenKb)} kB, bare ${kb(bareWork!.writtenKb)} kB; ` +
          `the events' payloads (JSON text) ours ${kb(ourPayloadKb)} kB, bare ${kb(barePayloadKb)} kB`,
      );
      if (BARE_PAYLOADS === 'documented') {
        // The baseline must make the same events as ours: the same names and counts for the sampled
        // accounts, the same keys per event name, and as much JSON within 10%.
        const differences = shapeDifferences(await eventShapes(db, ours.organizationId), await eventShapes(db, bare!.organizationId));
        if (Math.abs(barePayloadKb - ourPayloadKb) > 0.1 * ourPayloadKb) differences.push(`payload JSON per instalment: ours ${kb(ourPayloadKb)} kB, bare ${kb(barePayloadKb)} kB, more than 10% apart`);
        console.log(`events, ours against bare's (names and counts of ${SAMPLE_ACCOUNTS} accounts' events, key sets per event name, payload kB): ${differences.length === 0 ? 'the same' : 'DIFFERENT'}`);
        if (differences.length > 0) throw new Error(`the bare-SQL baseline did not record the same events as ours:\n${differences.join('\n')}`);
      } else console.log("the baseline's payloads are row dumps, lighter than ours (--bare-payloads documented: ours, built by the database)");
      if (ourDbMs !== undefined && bareDbMs !== undefined) {
        console.log(`the database's CPU per instalment (the embedded PostgreSQL, every backend): ours ${ourDbMs.toFixed(2)} ms, bare ${bareDbMs.toFixed(2)} ms`);
        console.log(cpuBound(ourWork.cpuMs + ourDbMs, schedulerRate, bareWork!.cpuMs + bareDbMs, bareRate));
      }
      console.log(`transactions per instalment (the gateway's included, batches shared): ours ${ourTransactions.toFixed(2)}, bare ${bareTransactions.toFixed(2)}`);
      ratio = Math.round((schedulerRate / bareRate) * 100) / 100;
      console.log(`ratio ours/bare: ${ratio.toFixed(2)}`);
    }
    summary = JSON.stringify({
      bench: 'scheduler',
      processor: PROCESSOR,
      per_second: Math.round(schedulerRate),
      over_limit: overLimit,
      lost,
      rate_limit: RATE_LIMIT ?? null,
      requests_per_charge: Math.round(requestsPerCharge * 100) / 100,
      bound_per_second: boundPerSecond,
      pace_slots_per_second: paceSlots,
      gateway_latency_ms: LATENCY_MS,
      ratio_to_bare: ratio,
      bare_payloads: BARE_PAYLOADS,
    });
  } finally {
    await stopQueue();
    for (const stop of stopAll) await stop();
    await scratch.close();
  }
  // Last, once everything is stopped (a warning of the closing pool would follow it otherwise).
  if (summary) console.log(summary);
}

/**
 * What the CPU alone allows: each run's CPU per instalment in all (this process and the
 * database's backends), the share of the machine's cores it kept busy, and so the most ours
 * could reach against bare if it kept the cores as busy as bare did (bare's CPU per instalment
 * over ours). A ratio goal above that bound needs less CPU per instalment, not more overlap.
 */
function cpuBound(oursMs: number, oursRate: number, bareMs: number, bareRate: number): string {
  const cores = availableParallelism();
  const used = (ms: number, rate: number) => `${Math.round((ms * rate) / (cores * 10))}%`;
  return (
    `CPU per instalment in all (this process and the database): ours ${oursMs.toFixed(2)} ms, bare ${bareMs.toFixed(2)} ms; ` +
    `the ${cores} cores kept busy: ours ${used(oursMs, oursRate)}, bare ${used(bareMs, bareRate)}; ` +
    `as busy as bare, ours could reach at most ${(bareMs / oursMs).toFixed(2)} of bare`
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
