/**
 * npm run bench:api — GET /customers/{id} through the whole service (auth, rate limit,
 * request and response validation, request logging) against a bare Express + pg handler
 * running the same two statements (customer, addresses; built by the service's repos), in the
 * same run, on the same database. Three middle variants show where the cost goes: bare + auth
 * and the rate limit; bare + express-openapi-validator; and bare + both, which is what the
 * rules alone cost before any code of ours. Each server is loaded in turn by autocannon, run
 * through its API in one child process for the whole bench (no process started between two
 * loads). A round is a palindrome of loads of half the round's time each (A E B C D D C B E A,
 * the bare handler A beside the full service E): each variant's two halves have the same mean
 * time, so a machine growing busier or quieter through the round (another's work starting or
 * ending) weighs on every variant alike, and the two the goal compares run a few seconds
 * apart. Medians are printed; a ratio against the bare handler is the median of each round's
 * own ratio, so that the machine's speed drifting from one round to the next (it does, on a
 * shared VM) moves both sides of a ratio alike. The job queue, needed only to create the
 * customer, is stopped before the loads: its timers (maintenance every 10 s, the statistics
 * check) fell on whichever variant was under load.
 * Authentication is the service's own in every variant that has it: with the quota this bench
 * sets (a billion a minute), its one token takes leases of its points (http/token-leases.ts),
 * as any production token far from its limit does, so about one statement per 256 requests.
 *
 * With `--processes N` (N > 1), the service is also started as `npm start` starts it, once
 * with WEB_CONCURRENCY=1 and once with WEB_CONCURRENCY=N, each a separate process tree over
 * the same database, loaded in alternating rounds; the scaling is N processes' req/s over one's.
 *
 * With `--watching`, the cost of watching instead: the service started as `npm start` starts it,
 * twice over the same database, once with metrics and traces off (METRICS_ENABLED=false, no
 * OTEL_*) and once with both on (/metrics served, and scraped every 5 s during the load as a
 * Prometheus would at a short interval; every request traced with the OTLP/HTTP exporter, to a
 * collector this bench runs that takes and drops the spans), loaded in alternating rounds; it
 * prints each side's req/s and the ratio on/off (the goal: at least 0.95), then where the
 * traced server's CPU went by package under the profiler, and the bound that share sets.
 *
 *   npm run bench:api [-- --seconds 5 --rounds 5 --connections 10 --processes 1]   (--seconds: each variant's time in a round)
 *   npm run bench:api -- --watching [--seconds 5 --rounds 5 --connections 10]
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import express, { type Express } from 'express';
import type { Knex } from 'knex';
import { webhookEvents } from '../server/webhooks/outbox';
import { API_BASE, createApp } from '../server/app';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import type { CustomerRow } from '../server/customer-store/customer-repo';
import { readCustomerRow } from '../server/customers/customer-read';
import { customerService, DEFAULT_CUSTOMER_INCLUDES } from '../server/customers/customer-service';
import { openScratchDatabase } from './scratch-database';
import { serveForBench, type BenchServer } from './bench-server';
import { startQueue } from '../server/jobs/queue';
import { tenantOf, type Tenant } from '../server/kernel/tenant';
import { authenticateAndLimit } from '../server/http/access';
import { openApiValidator } from '../server/http/validator';
import { customerToApi } from '../server/customer-store/customer-mapper';
import { createOrganization } from '../server/organizations/organization-repo';
import { gcPausedMs, median } from './measure';
import { cpuByComponent, GARBAGE_COLLECTION, NATIVE, NODE_OWN } from './cpu-profile';
import { createLogger, logDestination } from '../server/kernel/logging';
import { freePort } from '../server/kernel/net';

const root = resolve(__dirname, '..');
const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    processes: { type: 'string', default: '1' },
    watching: { type: 'boolean', default: false },
  },
});

/**
 * The same statement the service runs for GET /customers/{id} with its default include: the
 * customer by `{id|external_id}` with its addresses and its Portal account (`portal_account`)
 * as JSON (customers/customer-read.ts), so that the SQL, and PostgreSQL's work for it, is the
 * same in every variant. (Until 2026-12-05 the service sent three statements one after another,
 * and this handler the same three.)
 */
function sameQueries(db: Knex) {
  return async (tenant: Tenant, id: string) => {
    const { addresses, methods: _methods, portal: _portal, ...customer } = (await readCustomerRow(db, tenant, id, DEFAULT_INCLUDE))!;
    return { customer: customer as CustomerRow, addresses };
  };
}

/**
 * The bare handler, with the rules added one by one: `auth` puts authentication and the rate
 * limit in front; `validate` puts express-openapi-validator around it (request and answer
 * checked against the document), the answer then mapped to the document's shape by the
 * service's own mapper. Both together are what the rules cost before any code of ours.
 */
function handlerApp(db: Knex, tenant: Tenant, { auth = false, validate = false } = {}): Express {
  const query = sameQueries(db);
  const app = express();
  if (auth) app.use(API_BASE, authenticateAndLimit(db, { points: 1e9, durationSeconds: 60, keyPrefix: 'bench' }));
  if (validate) app.use(API_BASE, openApiValidator());
  app.get(`${API_BASE}/customers/:id`, async (req, res) => {
    const { customer, addresses } = await query(auth ? tenantOf(res) : tenant, req.params.id);
    res.json({ data: validate ? customerToApi(customer, { include: DEFAULT_INCLUDE, addresses, paymentMethods: [], debtAccounts: [], portalAccount: null }) : { ...customer, addresses } });
  });
  return app;
}

const DEFAULT_INCLUDE = new Set<string>(DEFAULT_CUSTOMER_INCLUDES);

interface Result {
  requests: number;
  p99: number;
  /** This process's CPU time over the load, per request answered (in-process servers only). */
  cpuPerRequest: number;
  /** The whole machine's busy CPU time per request (servers, PostgreSQL, the load, the kernel); NaN off Linux. */
  machinePerRequest: number;
  /** This process's garbage collection during the load: pauses per 1,000 requests, in ms. */
  gcPerThousand: number;
  /** Requests answered in all. */
  total: number;
  /** How long the load ran. */
  seconds: number;
}

/** CPU time a process has used so far, in µs (Linux /proc/<pid>/stat, 100 ticks a second; NaN elsewhere). */
function processCpu(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100);
  } catch {
    return Number.NaN;
  }
}

// Garbage collection is counted from the start (scripts/measure.ts): every load's pauses.
gcPausedMs();

/** Busy CPU time of the whole machine so far, in µs (Linux /proc/stat; NaN elsewhere). */
function machineBusy(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    return (user! + nice! + system! + irq! + softirq! + steal!) * (1e6 / 100);
  } catch {
    return Number.NaN;
  }
}

/**
 * autocannon's API in one child process for the whole run, each load asked for over IPC: no
 * process started (and no node booted, about 0.3 s of CPU on a quiet machine, more on a busy
 * one) between two loads, so loads can be short and follow one another closely.
 */
const GENERATOR = `const run = require('autocannon');
process.on('message', (settings) => run(settings, (error, result) => process.send(error
  ? { error: String(error && error.stack || error) }
  : { total: result.requests.total, seconds: result.duration, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors })));
process.on('disconnect', () => process.exit(0));`;

interface Generated {
  total: number;
  seconds: number;
  p99: number;
  non2xx: number;
  errors: number;
  error?: string;
}

let generator: ChildProcess | undefined;
function generate(settings: object): Promise<Generated> {
  generator ??= spawn(process.execPath, ['-e', GENERATOR], { cwd: root, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const child = generator;
  return new Promise((resolveLoad, reject) => {
    const exited = (code: number | null) => reject(new Error(`the load generator exited with ${code}`));
    child.once('exit', exited);
    child.once('message', (message: Generated) => {
      child.off('exit', exited);
      if (message.error) reject(new Error(message.error));
      else resolveLoad(message);
    });
    child.send(settings);
  });
}
function stopGenerator(): void {
  if (generator?.connected) generator.disconnect();
  generator = undefined;
}

async function load(url: string, token: string, seconds = Number(options.seconds)): Promise<Result> {
  // Every in-process server shares this heap: without a collection here, a load paid for the
  // garbage the one before it left (GC pauses of 0.3 to 4.7 s per 1,000 requests in the same
  // run, the slow rounds of either side), which swung each round's ratio. npm run bench:api
  // runs node with --expose-gc.
  (globalThis as { gc?: () => void }).gc?.();
  const cpu = process.cpuUsage();
  const busy = machineBusy();
  const gcBefore = gcPausedMs();
  const report = await generate({ url, connections: Number(options.connections), duration: seconds, headers: { authorization: `Bearer ${token}` } });
  const used = process.cpuUsage(cpu);
  const machine = machineBusy() - busy;
  if (report.non2xx > 0 || report.errors > 0) throw new Error(`${url}: ${report.non2xx} non-2xx answers, ${report.errors} errors`);
  return {
    requests: report.total / report.seconds,
    p99: report.p99,
    cpuPerRequest: (used.user + used.system) / report.total,
    machinePerRequest: machine / report.total,
    gcPerThousand: ((gcPausedMs() - gcBefore) * 1000) / report.total,
    total: report.total,
    seconds: report.seconds,
  };
}

/**
 * Two loads of one variant as one: req/s over both (requests over seconds), the other figures
 * per request over both, p99 the mean of the two.
 */
function together(a: Result, b: Result): Result {
  const total = a.total + b.total;
  const weighted = (measure: (result: Result) => number) => (measure(a) * a.total + measure(b) * b.total) / total;
  return {
    requests: total / (a.seconds + b.seconds),
    p99: (a.p99 + b.p99) / 2,
    cpuPerRequest: weighted((r) => r.cpuPerRequest),
    machinePerRequest: weighted((r) => r.machinePerRequest),
    gcPerThousand: weighted((r) => r.gcPerThousand),
    total,
    seconds: a.seconds + b.seconds,
  };
}

/** `npm start` with WEB_CONCURRENCY=processes on the scratch database; resolves once /health answers. */
async function startServers(databaseUrl: string, processes: number, extra: NodeJS.ProcessEnv = {}, nodeOptions: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    WEB_CONCURRENCY: String(processes),
    RATE_LIMIT_PER_MINUTE: '1000000',
    DATA_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'info',
    ...extra,
  };
  // Logs go to /dev/null, as the in-process service's do.
  const child = spawn(process.execPath, [...nodeOptions, '--import', 'tsx', 'server/main.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`the server with WEB_CONCURRENCY=${processes} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return { child, port };
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`the server with WEB_CONCURRENCY=${processes} did not start`);
}

/** One process against N, as `npm start` runs them; prints the scaling. */
async function scaling(databaseUrl: string, path: string, token: string, processes: number): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    const targets: { processes: number; url: string; results: Result[] }[] = [];
    for (const count of [1, processes]) {
      const { child, port } = await startServers(databaseUrl, count);
      children.push(child);
      targets.push({ processes: count, url: `http://127.0.0.1:${port}${path}`, results: [] });
    }
    for (const target of targets) await load(target.url, token); // warm-up
    for (let round = 0; round < Number(options.rounds); round++) {
      for (const target of targets) target.results.push(await load(target.url, token));
    }
    const one = median(targets[0]!.results.map((r) => r.requests));
    console.log(`\nnpm start, WEB_CONCURRENCY=1 vs ${processes} (separate processes, same database), medians`);
    console.log('processes                req/s   p99 ms   req/s vs 1 process');
    for (const target of targets) {
      const requests = median(target.results.map((r) => r.requests));
      const p99 = median(target.results.map((r) => r.p99));
      console.log(`${String(target.processes).padEnd(22)} ${requests.toFixed(0).padStart(7)} ${p99.toFixed(1).padStart(8)} ${(requests / one).toFixed(2).padStart(20)}`);
    }
  } finally {
    await Promise.all(
      children.map((child) => new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGTERM');
      })),
    );
  }
}

/** A collector that takes OTLP/HTTP exports and drops them, answering as a collector does. */
async function startSink(): Promise<{ url: string; received: () => number; close: () => void }> {
  let received = 0;
  const sink = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      received += 1;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((done) => sink.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`, received: () => received, close: () => sink.close() };
}

const METRICS_TOKEN = randomBytes(24).toString('base64url');

/** The same load against the service with metrics and traces off, and with both on; prints the ratio. */
async function watching(databaseUrl: string, path: string, token: string): Promise<void> {
  const sink = await startSink();
  const children: ChildProcess[] = [];
  let scrapes = 0;
  let failedScrapes = 0;
  try {
    const traced = { METRICS_ENABLED: 'true', METRICS_TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_SERVICE_NAME: 'dcs-bench' };
    const variants: [string, NodeJS.ProcessEnv][] = [
      ['metrics and traces off', { METRICS_ENABLED: 'false' }],
      ['metrics on', { METRICS_ENABLED: 'true', METRICS_TOKEN }],
      ['+ traces, 1 in 10', { ...traced, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }],
      ['+ traces, every request', traced],
    ];
    const targets: { label: string; port: number; pid: number; url: string; results: Result[] }[] = [];
    for (const [label, env] of variants) {
      const started = await startServers(databaseUrl, 1, env);
      children.push(started.child);
      targets.push({ label, port: started.port, pid: started.child.pid!, url: `http://127.0.0.1:${started.port}${path}`, results: [] });
    }
    // The server process's own CPU per request (its scrapes and exports included): on a machine
    // shared with other work, req/s follows what the others leave; this follows our code.
    const measured = async (target: (typeof targets)[number]): Promise<Result> => {
      const before = processCpu(target.pid);
      const result = await load(target.url, token);
      return { ...result, cpuPerRequest: (processCpu(target.pid) - before) / result.total };
    };
    // Prometheus, scraping every watched server every 5 s while the bench runs.
    const scrape = async () => {
      for (const { port } of targets.slice(1)) {
        const answer = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).catch(() => undefined);
        if (answer?.ok) scrapes += 1;
        else failedScrapes += 1;
        await answer?.text();
      }
    };
    const scraper = setInterval(() => void scrape(), 5_000);
    try {
      for (const target of targets) await load(target.url, token); // warm-up
      for (let round = 0; round < Number(options.rounds); round++) {
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) target.results.push(await measured(target));
      }
    } finally {
      clearInterval(scraper);
    }
    await scrape();
    const off = targets[0]!.results;
    const ratios = (results: Result[]) => results.map((result, round) => result.requests / off[round]!.requests);
    console.log(`GET /customers/{id} through npm start (WEB_CONCURRENCY=1): ${options.rounds} rounds of ${options.seconds}s, ${options.connections} connections, alternating, medians (a ratio: the median of each round's own)`);
    // CPU ratio: the server's CPU per request with both off over this variant's, each round's own:
    // the req/s a server bound by its own CPU would keep.
    const cpuRatios = (results: Result[]) => results.map((result, round) => off[round]!.cpuPerRequest / result.cpuPerRequest);
    console.log('variant                   req/s   p99 ms   server CPU µs/req   req/s vs off   CPU ratio   req/s vs off, each round');
    for (const target of targets) {
      const requests = median(target.results.map((r) => r.requests));
      const p99 = median(target.results.map((r) => r.p99));
      const cpu = median(target.results.map((r) => r.cpuPerRequest));
      const each = ratios(target.results);
      console.log(
        `${target.label.padEnd(23)} ${requests.toFixed(0).padStart(7)} ${p99.toFixed(1).padStart(8)} ${cpu.toFixed(0).padStart(19)} ${median(each).toFixed(2).padStart(14)} ${median(cpuRatios(target.results)).toFixed(2).padStart(11)}   ${each.map((ratio) => ratio.toFixed(2)).join(' ')}`,
      );
    }
    // The line: metrics and traces on (every request traced) against both off.
    const line = (results: Result[]) => `${median(ratios(results)).toFixed(2)} (CPU ${median(cpuRatios(results)).toFixed(2)})`;
    console.log(
      `watching_ratio ${line(targets[targets.length - 1]!.results)} (goal >= 0.95; every request traced), sampled 1 in 10: ${line(targets[2]!.results)}, metrics alone: ${line(targets[1]!.results)}; ` +
        `${scrapes} scrapes of /metrics answered, ${failedScrapes} not; ${sink.received()} trace exports received by the collector`,
    );
    // What the cost is made of: the first and the last variant once more, each under the CPU
    // profiler for one load, their CPU per request shared out by package.
    const unwatched = await profiled(databaseUrl, variants[0]![1], path, token);
    const watched = await profiled(databaseUrl, variants[variants.length - 1]![1], path, token);
    // Watching's own packages one by one, each with the Node and native work it called (a
    // span's ids, the export's JSON and its HTTP request: scripts/cpu-profile.ts, by caller);
    // the service and its other libraries in one row, since a load under the profiler on a
    // busy machine moves it more than watching does; Node's own work started from its event
    // loop (sockets, timers, the async hooks' bookkeeping) and garbage collection apart.
    const watching = (name: string) => name.startsWith('@opentelemetry/') || name === 'prom-client';
    const rowOf = (name: string) =>
      watching(name) || name === GARBAGE_COLLECTION ? name : name === NODE_OWN || name === NATIVE ? "Node's own, from its event loop" : 'the service and its other libraries';
    const rows = new Map<string, { off: number; on: number }>();
    for (const [side, profile] of [['off', unwatched], ['on', watched]] as const) {
      for (const [name, micros] of profile.perRequest) {
        const row = rowOf(name);
        const entry = rows.get(row) ?? { off: 0, on: 0 };
        entry[side] += micros;
        rows.set(row, entry);
      }
    }
    const own = [...rows].filter(([name]) => watching(name)).reduce((sum, [, { on }]) => sum + on, 0);
    console.log(`\nwhere the server's CPU went, µs per request, one load of each under node --cpu-prof (slower than above, both alike): off ${unwatched.total.toFixed(0)}, every request traced ${watched.total.toFixed(0)}`);
    console.log('component (with the Node work it called)   off       on');
    for (const [name, { off: before, on: after }] of [...rows].sort((a, b) => b[1].on - b[1].off - (a[1].on - a[1].off))) {
      console.log(`${name.padEnd(40)} ${before.toFixed(0).padStart(6)} ${after.toFixed(0).padStart(8)}`);
    }
    console.log(`watching's own packages (OpenTelemetry, prom-client), with what they called: ${own.toFixed(0)} µs per request, ${((own / watched.total) * 100).toFixed(0)}% of the traced server's CPU`);
    // The most the goal could reach with every request traced, whatever else were made free:
    // the traced server does at least the untraced one's work (S) plus the watching packages'
    // own (O), so its ratio is at most S / (S + O) = 1 - their share of its CPU. A share, read
    // off one profile, moves far less with a busy machine than the rates do.
    const share = own / watched.total;
    console.log(`bound with every request traced: at most ${(1 - share).toFixed(2)} (1 - the watching packages' share of the traced server's CPU, ${(share * 100).toFixed(0)}%; goal >= 0.95)`);
  } finally {
    await Promise.all(
      children.map((child) => new Promise((done) => {
        child.once('exit', done);
        child.kill('SIGTERM');
      })),
    );
    sink.close();
  }
}

async function main(): Promise<void> {
  if (options.watching) return watchingOnly();
  const scratch = await openScratchDatabase('bench', 20);
  const { db } = scratch;
  const url = new URL(scratch.url);
  const servers: BenchServer[] = [];
  let stopQueue = async () => {};
  try {
    const organization = await createOrganization(db, 'Bench Recovery');
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
    // The service's own logger (its redaction included), writing to /dev/null.
    const logger = createLogger('info', logDestination('/dev/null'));
    const boss = await startQueue(url.toString(), logger);
    stopQueue = () => boss.stop({ graceful: false, wait: true });
    const customer = await customerService({ db, events: webhookEvents(boss), clock: () => new Date() }).create(
      tenant,
      { name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example', external_id: 'CUST-100482', address: { postal_code: '78704', city: 'Austin' }, metadata: { portfolio: 'spring-2026' } },
      new Set(['metadata', 'addresses']),
    );
    // The full service as deployed: request logs included (written to /dev/null).
    // The queue was needed to create the customer, not to answer GET /customers/{id}: stopped
    // now, its timers (maintenance every 10 s, the statistics check) no longer land on whichever
    // variant happens to be under load (they are the same for all, and not per request).
    await stopQueue();
    stopQueue = async () => {};
    const config = { ...loadConfig({ PORT: '0' }), rateLimitPerMinute: 1_000_000_000 };
    // The bare handler and the full service side by side, so that their loads follow each other.
    const variants: [string, Express][] = [
      ['bare Express + pg', handlerApp(db, tenant)],
      ['full service', createApp({ config, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(config.dataDir) })],
      ['+ auth + rate limit', handlerApp(db, tenant, { auth: true })],
      ['+ validation only', handlerApp(db, tenant, { validate: true })],
      ['+ auth + validation', handlerApp(db, tenant, { auth: true, validate: true })],
    ];
    const targets: { label: string; url: string; results: Result[] }[] = [];
    for (const [label, app] of variants) {
      const served = await serveForBench(app);
      servers.push(served);
      targets.push({ label, url: `${served.base}/customers/${customer.id}`, results: [] });
    }
    const half = Number(options.seconds) / 2;
    for (const target of targets) await load(target.url, organization.production_token, half); // warm-up
    // A round is a palindrome of half-length loads (A B C D E E D C B A): every variant's two
    // halves have the same mean time, so a machine growing busier or quieter through the round
    // (other work starting or ending) weighs on every variant alike; the bare handler and the
    // full service are neighbours, so their ratio compares loads a few seconds apart.
    for (let round = 0; round < Number(options.rounds); round++) {
      const first: Result[] = [];
      for (const target of targets) first.push(await load(target.url, organization.production_token, half));
      const second: Result[] = [];
      for (const target of [...targets].reverse()) second.unshift(await load(target.url, organization.production_token, half));
      targets.forEach((target, i) => target.results.push(together(first[i]!, second[i]!)));
    }
    const bare = targets[0]!.results;
    /** Each round's ratio of this variant to the bare handler. */
    const roundRatios = (results: Result[], measure: (result: Result) => number) => results.map((result, round) => measure(result) / measure(bare[round]!));
    const pairedRatio = (results: Result[], measure: (result: Result) => number) => median(roundRatios(results, measure));
    console.log(
      `GET /customers/{id}: ${options.rounds} rounds, each variant ${options.seconds}s a round in two loads (A B C D E E D C B A), ${options.connections} connections, medians (a ratio: the median of each round's ratio); load average ${loadavg().map((load) => load.toFixed(2)).join(', ')} on ${availableParallelism()} CPUs`,
    );
    // CPU µs per request is this process's (the servers'), not PostgreSQL's nor the load's; on
    // a busy machine it varies less than req/s and shows where the time goes.
    // The machine's column adds PostgreSQL, the load generator and the kernel: on 2 cores the
    // sum, not the server's share alone, sets the rate.
    console.log('variant                  req/s   p99 ms   req/s vs bare   p99 vs bare   CPU µs/req   machine µs/req');
    for (const target of targets) {
      const requests = median(target.results.map((r) => r.requests));
      const p99 = median(target.results.map((r) => r.p99));
      const cpu = median(target.results.map((r) => r.cpuPerRequest));
      const machine = median(target.results.map((r) => r.machinePerRequest));
      console.log(
        `${target.label.padEnd(22)} ${requests.toFixed(0).padStart(7)} ${p99.toFixed(1).padStart(8)} ${pairedRatio(target.results, (r) => r.requests).toFixed(2).padStart(15)} ${pairedRatio(target.results, (r) => r.p99).toFixed(2).padStart(13)} ${cpu.toFixed(0).padStart(12)} ${machine.toFixed(0).padStart(16)}`,
      );
    }
    const full = targets[1]!.results;
    console.log(`full service / bare, req/s of each round: ${roundRatios(full, (r) => r.requests).map((ratio) => ratio.toFixed(2)).join(' ')}`);
    // Bare's CPU per request over the full service's, each round's own: the req/s ratio a server
    // bound by its own CPU would keep, which is where a saturated machine takes the req/s ratio.
    const cpuRatios = full.map((result, round) => bare[round]!.cpuPerRequest / result.cpuPerRequest);
    console.log(`full service / bare, CPU ratio (bare's CPU per request over the full service's) of each round: ${cpuRatios.map((ratio) => ratio.toFixed(2)).join(' ')}; median ${median(cpuRatios).toFixed(2)}`);
    // What a slow round had that the others had not: its CPU per request against the machine's
    // (another process's load shows in the machine's column alone), and its GC pauses.
    console.log('  each round, full service | bare: CPU µs/req, machine µs/req, GC ms per 1,000 req');
    full.forEach((result, round) => {
      const base = bare[round]!;
      console.log(
        `  round ${round + 1}: ${(result.requests / base.requests).toFixed(2)}  ${result.cpuPerRequest.toFixed(0)} | ${base.cpuPerRequest.toFixed(0)}  ${result.machinePerRequest.toFixed(0)} | ${base.machinePerRequest.toFixed(0)}  ${result.gcPerThousand.toFixed(1)} | ${base.gcPerThousand.toFixed(1)}`,
      );
    });
    // The bound: bare with the rules every request must pass (our authentication and rate
    // limit, express-openapi-validator on the request and the response), before any code of
    // ours. The full service does all of that and more, so it cannot pass this ratio.
    const rules = targets.find((target) => target.label === '+ auth + validation')!.results;
    console.log(
      `bound: bare + auth + validation (the rules alone, no code of ours) ${pairedRatio(rules, (r) => r.requests).toFixed(2)} of bare's req/s (CPU ratio ${median(rules.map((result, round) => bare[round]!.cpuPerRequest / result.cpuPerRequest)).toFixed(2)}); the full service ${pairedRatio(full, (r) => r.requests).toFixed(2)}; goal >= 0.85`,
    );
    const processes = Number(options.processes);
    if (processes > 1) await scaling(scratch.url, `${API_BASE}/customers/${customer.id}`, organization.production_token, processes);
  } finally {
    // As the server stops: requests a load left in flight answered, then the pools.
    stopGenerator();
    await Promise.all(servers.map((served) => served.stop()));
    await stopQueue();
    await scratch.close();
  }
}

/**
 * The service started with `env` under the CPU profiler, loaded once after a warm-up, then
 * stopped: its CPU per request by component (scripts/cpu-profile.ts), over the load alone.
 */
async function profiled(databaseUrl: string, env: NodeJS.ProcessEnv, path: string, token: string): Promise<{ total: number; perRequest: Map<string, number> }> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-api-profile-'));
  try {
    const { child, port } = await startServers(databaseUrl, 1, env, ['--cpu-prof', '--cpu-prof-dir', directory]);
    const url = `http://127.0.0.1:${port}${path}`;
    await load(url, token); // warm-up
    const started = Date.now();
    const result = await load(url, token);
    const loaded = Date.now();
    await new Promise((done) => {
      child.once('exit', done);
      child.kill('SIGTERM');
    });
    // The profile ends as the process exits: the load was the `loaded - started` ms that ended
    // this long before.
    const stopping = (Date.now() - loaded) * 1000;
    const file = readdirSync(directory).find((name) => name.includes(`.${child.pid}.0.`));
    if (!file) throw new Error(`no CPU profile of the main thread in ${directory}`);
    const byComponent = cpuByComponent(join(directory, file), { fromEnd: stopping + (loaded - started) * 1000, toEnd: stopping }, true);
    const perRequest = new Map([...byComponent].map(([name, micros]) => [name, micros / result.total]));
    return { total: [...perRequest.values()].reduce((sum, each) => sum + each, 0), perRequest };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** `--watching`: a scratch database with one organization and customer, then the comparison. */
async function watchingOnly(): Promise<void> {
  const scratch = await openScratchDatabase('bench', 20);
  const logger = createLogger('silent');
  const boss = await startQueue(scratch.url, logger);
  try {
    const organization = await createOrganization(scratch.db, 'Bench Recovery');
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
    const customer = await customerService({ db: scratch.db, events: webhookEvents(boss), clock: () => new Date() }).create(
      tenant,
      { name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example', external_id: 'CUST-100482', address: { postal_code: '78704', city: 'Austin' }, metadata: { portfolio: 'spring-2026' } },
      new Set(['metadata', 'addresses']),
    );
    await watching(scratch.url, `${API_BASE}/customers/${customer.id}`, organization.production_token);
  } finally {
    stopGenerator();
    await boss.stop({ graceful: false, wait: true });
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
