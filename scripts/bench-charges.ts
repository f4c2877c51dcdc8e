/**
 * npm run bench:charges — card charges per second through the whole service (POST /charges with
 * a saved card in the sandbox, each request with its own Idempotency-Key) across many accounts,
 * each with its own saved card, with the sandbox gateway answering as slowly as a real processor
 * (SANDBOX_GATEWAY_LATENCY_MS), and whether anything starves meanwhile: the p99 of
 * `GET /debt-accounts/{id}` measured while the charges run, against its p99 with no charges
 * running, in the same run (reads alone before and after the charges; their mean is the baseline),
 * and the reads' rate while the charges ran as a share of their rate alone.
 *
 * The server runs in this process on a pool of the server's size (DATABASE_POOL_MAX, 20 unless
 * set, or `--pool N`); with `--processes N` (N > 1) it runs instead as `npm start` runs it with
 * WEB_CONCURRENCY=N: N server processes on one port, each with a pool of that size and its own
 * job workers, over the same database (as operators run several), and the reads go to the same
 * port, measured the same way. autocannon loads it from child processes (the charges and the
 * reads at once). Seeding is set-based SQL: customers, one account each ($1,000,000.00, so none
 * is paid off), a card each, tokenized by the sandbox.
 *
 *   npm run bench:charges [-- --accounts 1000 --gateway-latency-ms 300 --connections 100 --seconds 10 --read-connections 10 --processes 1 --pool 20]
 *
 * The last line is one JSON object of the figures:
 * {"bench":"charges","gateway_latency_ms","per_second","read_p99_ratio","processes"}.
 *
 * DATABASE_URL: an existing server (a scratch database is created on it and dropped after);
 * without it, an embedded PostgreSQL of its own under .data/.
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import pino from 'pino';
import { createApp } from '../server/app';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { gatewayFor } from '../server/gateway/gateways';
import { webhookEvents } from '../server/webhooks/outbox';
import type { AppDeps } from '../server/deps';
import type { Tenant } from '../server/kernel/tenant';
import { openScratchDatabase } from './scratch-database';
import { serveForBench, type BenchServer } from './bench-server';
import { API_BASE } from '../server/app';
import { freePort } from '../server/kernel/net';
import { treeCpuMs } from './measure';

const root = resolve(__dirname, '..');
const run = promisify(execFile);
const { values: options } = parseArgs({
  options: {
    accounts: { type: 'string', default: '1000' },
    'gateway-latency-ms': { type: 'string', default: '300' },
    connections: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    'read-connections': { type: 'string', default: '10' },
    processes: { type: 'string', default: '1' },
    statements: { type: 'boolean', default: false },
    pool: { type: 'string', default: String(loadConfig().databasePoolMax) },
  },
});
const ACCOUNTS = Number(options.accounts);
const LATENCY_MS = Number(options['gateway-latency-ms']);
const SECONDS = Number(options.seconds);
const PROCESSES = Number(options.processes);
/** Each server process's pool: the server's (DATABASE_POOL_MAX, or its default), or `--pool N`. */
const POOL = Number(options.pool);

interface Load {
  /** 2xx answers per second over the run. */
  perSecond: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
}

/**
 * autocannon's API in a child process: each request takes the next target (path and body) in
 * turn, and an Idempotency-Key of its own.
 */
const RUNNER = `const run = require('autocannon');
const settings = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
const targets = settings.targets;
delete settings.targets;
let next = 0;
settings.requests = [{ setupRequest: (request) => {
  const target = targets[next++ % targets.length];
  request.path = target.path;
  if (target.body) request.body = JSON.stringify(target.body);
  request.headers = { ...request.headers, 'idempotency-key': 'bench-' + process.pid + '-' + next };
  return request;
} }];
run(settings, (error, result) => { if (error) throw error; process.stdout.write(JSON.stringify(result)); });`;

async function load(origin: string, token: string, method: 'GET' | 'POST', connections: number, targets: { path: string; body?: object }[]): Promise<Load> {
  const settings = {
    url: origin,
    connections,
    duration: SECONDS,
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    targets,
  };
  // The targets are too many for a command line: handed over in a file.
  const file = join(tmpdir(), `bench-charges-${process.pid}-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, JSON.stringify(settings));
  const { stdout } = await run(process.execPath, ['-e', RUNNER, file], { cwd: root, maxBuffer: 256 * 1024 * 1024 }).finally(() => rmSync(file, { force: true }));
  const report = JSON.parse(stdout) as { '2xx': number; non2xx: number; errors: number; duration: number; latency: { p50: number; p99: number }; statusCodeStats?: Record<string, { count: number }> };
  const statuses = Object.fromEntries(Object.entries(report.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  if (report.non2xx > 0 || report.errors > 0) throw new Error(`${method} ${targets[0]!.path}: ${report.non2xx} non-2xx answers, ${report.errors} errors ${JSON.stringify(statuses)}`);
  return { perSecond: report['2xx'] / report.duration, p50: report.latency.p50, p99: report.latency.p99, statuses };
}

/** `ACCOUNTS` customers, an account each and a card each (its own sandbox token); answers the accounts and cards. */
async function seed(deps: AppDeps, tenant: Tenant): Promise<{ account_id: string; method_id: string }[]> {
  const { db } = deps;
  const org = tenant.organizationId;
  const gateway = (await gatewayFor(deps, tenant))!;
  const year = new Date().getUTCFullYear() + 3;
  const tokens: string[] = [];
  for (let i = 0; i < ACCOUNTS; i += 50) {
    tokens.push(...(await Promise.all(Array.from({ length: Math.min(50, ACCOUNTS - i) }, () => gateway.tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: year })))));
  }
  await db.raw(
    `INSERT INTO customers (organization_id, environment, external_id, name, email)
     SELECT :org, 'sandbox', 'PAYER-' || g, 'Bench Payer ' || g, 'payer' || g || '@bench.example' FROM generate_series(1, :n::int) AS g`,
    { org, n: ACCOUNTS },
  );
  const [location] = (await db.raw(`INSERT INTO locations (organization_id, environment, external_id, name) VALUES (?, 'sandbox', 'LOC-BENCH', 'Bench Clinic') RETURNING id`, [org])).rows;
  await db.raw(
    `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, external_id, balance, current_balance, status)
     SELECT c.organization_id, c.environment, c.id, :location, c.external_id, 100000000, 100000000, 'active' FROM customers c WHERE c.organization_id = :org`,
    { org, location: location.id },
  );
  await db.raw(
    `INSERT INTO payment_methods (organization_id, environment, customer_id, type, card_holder, card_last4, card_brand, card_exp_month, card_exp_year, card_zip, gateway_token, is_primary)
     SELECT c.organization_id, c.environment, c.id, 'card', c.name, '4242', 'visa', 8, :year::int, '78704', t.token, true
       FROM (SELECT id, name, organization_id, environment, row_number() OVER (ORDER BY external_id) AS n FROM customers WHERE organization_id = :org) c
       JOIN unnest(:tokens::text[]) WITH ORDINALITY AS t(token, n) ON t.n = c.n`,
    { org, year, tokens },
  );
  await db.raw('ANALYZE');
  const { rows } = await db.raw(`SELECT a.id AS account_id, m.id AS method_id FROM debt_accounts a JOIN payment_methods m ON m.customer_id = a.customer_id WHERE a.organization_id = ?`, [org]);
  return rows;
}

/** The service under load: where it answers, when every request so far is answered, and how it stops. */
interface Served {
  base: string;
  /** CPU time the server's processes have used so far, in ms. */
  cpuMs(): number;
  settled(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `npm start` with WEB_CONCURRENCY=PROCESSES on the scratch database (its logs to /dev/null, as
 * the in-process service's); ready once /health answers. Settled once no charge is `processing`.
 */
async function startServers(databaseUrl: string, db: AppDeps['db'], dataKey: Buffer): Promise<Served> {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    WEB_CONCURRENCY: String(PROCESSES),
    RATE_LIMIT_PER_MINUTE: '1000000',
    DATA_ENCRYPTION_KEY: dataKey.toString('base64'),
    SANDBOX_GATEWAY_LATENCY_MS: String(LATENCY_MS),
    DATABASE_POOL_MAX: String(POOL),
    LOG_LEVEL: 'info',
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the server with WEB_CONCURRENCY=${PROCESSES} exited with ${child.exitCode}`);
    if (i === 1200) throw new Error(`the server with WEB_CONCURRENCY=${PROCESSES} did not start`);
    if (await fetch(`http://127.0.0.1:${port}/health`).then((answer) => answer.ok, () => false)) break;
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    base: `http://127.0.0.1:${port}${API_BASE}`,
    cpuMs: () => treeCpuMs(child.pid!),
    settled: async () => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((done) => setTimeout(done, 100))) {
        const [row] = await db('charges').where({ status: 'processing' }).count<{ n: string }[]>('* as n');
        if (Number(row?.n) === 0) return;
      }
      throw new Error('charges still processing 60 s after the load ended');
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-charges', POOL);
  const { db } = scratch;
  let served: Served | undefined;
  let stopQueue = async () => {};
  try {
    const organization = await createOrganization(db, 'Bench Charges Agency');
    const token = organization.sandbox_token;
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: '' };
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
    const boss = await startQueue(scratch.url, logger);
    stopQueue = () => boss.stop({ graceful: false, wait: true });
    const config = { ...loadConfig({ PORT: '0', SANDBOX_GATEWAY_LATENCY_MS: String(LATENCY_MS) }), rateLimitPerMinute: 1_000_000_000 };
    const dataKey = randomBytes(32);
    const deps: AppDeps = { config, db, logger, secrets: new SecretBox(dataKey), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(config.dataDir) };
    const started = Date.now();
    const accounts = await seed(deps, tenant);
    if (PROCESSES > 1) {
      // The servers' own queue: this process's stops before they start theirs.
      await stopQueue();
      stopQueue = async () => {};
      served = await startServers(scratch.url, db, dataKey);
    } else {
      const bench: BenchServer = await serveForBench(createApp(deps));
      served = { ...bench, cpuMs: () => { const { user, system } = process.cpuUsage(); return (user + system) / 1000; } };
    }
    const origin = new URL(served.base).origin;
    const path = new URL(served.base).pathname;
    const server = PROCESSES > 1 ? `${PROCESSES} server processes (npm start, WEB_CONCURRENCY=${PROCESSES}), each with a pool of ${POOL}` : `the server in this process, pool ${POOL}`;
    console.log(`database: ${scratch.source}; ${server}; ${accounts.length} accounts, each with its own card, seeded in ${Date.now() - started} ms; gateway ${LATENCY_MS} ms`);

    const reads = accounts.map((each) => ({ path: `${path}/debt-accounts/${each.account_id}` }));
    const charges = accounts.map((each) => ({ path: `${path}/charges`, body: { amount: 100, debt_account_id: each.account_id, payment_method_id: each.method_id } }));
    const readsAlone = () => load(origin, token, 'GET', Number(options['read-connections']), reads);

    await load(origin, token, 'GET', 2, reads.slice(0, 50)); // warm-up
    const before = await readsAlone();
    // What the charges cost in CPU, the server's and the database's (the embedded one's processes;
    // NaN on DATABASE_URL), and how late this process's event loop ran meanwhile (in-process only).
    const database = `bench-charges-${process.pid}/pg`;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    // --statements (in-process only): each statement's count while the charges ran, on stderr.
    const statements = new Map<string, number>();
    let counting = false;
    if (options.statements) db.on('query', (q: { sql: string }) => counting && statements.set(q.sql, (statements.get(q.sql) ?? 0) + 1));
    counting = true;
    // How long the in-process server's statements (the charges' and the reads') waited for a pooled connection meanwhile.
    const waits: number[] = [];
    const acquire = db.client.acquireConnection.bind(db.client);
    db.client.acquireConnection = async () => {
      const asked = performance.now();
      const connection = await acquire();
      if (counting) waits.push(performance.now() - asked);
      return connection;
    };
    const cpuBefore = { server: served.cpuMs(), database: treeCpuMs(database) };
    delay.enable();
    const [charged, readsLoaded] = await Promise.all([load(origin, token, 'POST', Number(options.connections), charges), readsAlone()]);
    await served.settled();
    delay.disable();
    counting = false;
    const cpu = { server: served.cpuMs() - cpuBefore.server, database: treeCpuMs(database) - cpuBefore.database };
    const after = await readsAlone();

    const aloneP99 = (before.p99 + after.p99) / 2;
    console.log(`charges: ${charged.perSecond.toFixed(0)}/s over ${options.connections} connections (${JSON.stringify(charged.statuses)}), p50 ${charged.p50} ms, p99 ${charged.p99} ms`);
    console.log(
      `GET /debt-accounts/{id} p99 (${options['read-connections']} connections): alone ${before.p99} ms before, ${after.p99} ms after; ${readsLoaded.p99} ms while charges ran (${readsLoaded.perSecond.toFixed(0)} reads/s, against ${before.perSecond.toFixed(0)} alone: ${Math.round((100 * readsLoaded.perSecond) / before.perSecond)}% of it)`,
    );
    const made = await db('charges').where({ organization_id: tenant.organizationId }).groupBy('status').select('status').count('* as n');
    console.log(`charges made: ${made.map((row) => `${row.n} ${row.status}`).join(', ')}`);
    // The reads made meanwhile are counted in too: per charge is an upper bound of the charge's own.
    const count = made.reduce((sum, row) => sum + Number(row.n), 0);
    const perCharge = (ms: number) => (Number.isNaN(ms) ? 'n/a' : `${((ms * 1000) / count).toFixed(0)} µs`);
    const loop = PROCESSES > 1 ? '' : `; event loop delay p50 ${(delay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms, max ${(delay.max / 1e6).toFixed(0)} ms`;
    if (options.statements) {
      const all = [...statements.values()].reduce((sum, n) => sum + n, 0);
      console.error(`${(all / count).toFixed(2)} statements per charge (the reads' own included):`);
      for (const [sql, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.error(`${(n / count).toFixed(2).padStart(7)} ${sql.slice(0, 220)}`);
    }
    if (PROCESSES === 1) {
      const summary = (all: number[]) => {
        all.sort((a, b) => a - b);
        const at = (q: number) => (all[Math.min(all.length - 1, Math.floor(q * all.length))] ?? 0).toFixed(1);
        return `${all.length} (mean ${(all.reduce((sum, w) => sum + w, 0) / Math.max(1, all.length)).toFixed(1)} ms, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms)`;
      };
      console.log(`waits for a pooled connection while charges ran: ${summary(waits)}`);
    }
    console.log(`CPU per charge while charges ran (reads made meanwhile included): server ${perCharge(cpu.server)}, database ${perCharge(cpu.database)}${loop}`);
    const ratio = Math.round((readsLoaded.p99 / aloneP99) * 100) / 100;
    console.log(JSON.stringify({ bench: 'charges', gateway_latency_ms: LATENCY_MS, per_second: Math.round(charged.perSecond), read_p99_ratio: ratio, processes: PROCESSES }));
  } finally {
    await served?.stop();
    await stopQueue();
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
