/**
 * npm run bench:webhooks — deliveries per second from the outbox to a local receiver, and the
 * memory of the delivering process before and after.
 *
 * N events (default 10,000 customer.update events with a real customer's payload, spread
 * round-robin over O customers, default 1,000: the deliveries of one object to one webhook go
 * in order, one after the other, so all on one customer would measure one queue) are written
 * to the event log and outbox through the events port, as the services write them, for W
 * webhooks (default 4) that all subscribe, so N × W deliveries. The log's size per event
 * (table, TOAST and indexes) is printed after writing. Then one delivery worker, in this
 * process, as `npm start` runs it, delivers them to a receiver in a child process (answering
 * 200 on keep-alive connections). The clock runs from the worker's start until the last
 * delivery is recorded as delivered in the database.
 *
 * Baseline, in the same run: the same number of signed POSTs of the same body to the same
 * receiver, by a bare loop with no database and no queue (same sender, same concurrency as the
 * worker), and our rate as a ratio of it.
 *
 *   npm run bench:webhooks [-- --events 10000 --webhooks 4]
 *   npm run bench:webhooks -- --isolation [--events 3000 --fast-ms 5 --slow-ms 5000 --rounds 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Knex } from 'knex';
import pino from 'pino';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import { customerService } from '../server/customers/customer-service';
import type { Tenant } from '../server/kernel/tenant';
import { decodeEventBody, eventBodyText } from '../server/kernel/event-body';
import { openScratchDatabase } from './scratch-database';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { startWebhookWorker } from '../server/webhooks/delivery-worker';
import { newDeliveryStats, type DeliveryStats } from '../server/webhooks/delivery-recording';
import { webhookEvents } from '../server/webhooks/outbox';
import { webhookRepo } from '../server/webhooks/webhook-repo';
import { postWebhook } from '../server/webhooks/sender';
import { legacySignature, standardSignature } from '../server/webhooks/signing';

/*
 * With --isolation: the rate of one endpoint answering in 5 ms (--fast-ms) alone, and beside one
 * answering in 5 s (--slow-ms), in rounds (--rounds, default 5) after an untimed warm-up. Each
 * round: --events events to the fast endpoint alone (the slow webhook disabled, its waiting
 * attempts dropped), then --events events to both. A phase's rate is its deliveries over the time
 * from the worker's start to the last of them recorded delivered, both by the database's clock:
 * not by a poll every 200 ms, since a phase of 3000 deliveries lasts 1 to 3 s and the poll's step
 * was up to a fifth of it. A round's ratio is its two phases, measured back to back so that the
 * load of the machine moves both alike; the result is the median of the rounds' ratios (one
 * round of 3000 events was too short to be steady: three runs of it gave 1.24, 0.75, 1.18).
 * The slow endpoint is new in round 1: found slow during it (its slots full for SLOW_ANSWER_MS,
 * delivery-lanes.ts) and put in the slow lane, where it stays; round 1 is also printed on its own,
 * as the cost of finding a slow endpoint.
 */

/** As many attempts in flight as the worker allows by default (delivery-worker.ts). */
const BARE_CONCURRENCY = 256;

/** `total` signed POSTs spread over `urls`, BARE_CONCURRENCY at a time; answers deliveries per second. */
async function bareLoop(total: number, urls: string[], payload: unknown, secrets: string[]): Promise<number> {
  let next = 0;
  const started = Date.now();
  const lane = async () => {
    while (next < total) {
      const i = next++;
      const hook = i % urls.length;
      const body = Buffer.from(JSON.stringify({ data: payload }), 'utf8');
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'debt-collection-service-webhooks/1',
        'X-Service-Event-Name': 'customer.update',
        'X-Service-Webhook-ID': `bare-${hook}`,
        'X-Service-Delivery-ID': `bare-${i}`,
        'X-Service-Signature-256': legacySignature(body, secrets[hook]!),
        'webhook-id': `bare-${i}`,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': standardSignature(`bare-${i}`, timestamp, body, [secrets[hook]!]),
      };
      const result = await postWebhook(urls[hook]!, headers, body, { timeoutMs: 10_000, allowInsecure: true });
      if (!result.ok) throw new Error(`bare loop: ${result.error ?? result.status}`);
    }
  };
  await Promise.all(Array.from({ length: BARE_CONCURRENCY }, lane));
  return total / ((Date.now() - started) / 1000);
}

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    webhooks: { type: 'string', default: '4' },
    objects: { type: 'string', default: '1000' },
    isolation: { type: 'boolean', default: false },
    'fast-ms': { type: 'string', default: '5' },
    'slow-ms': { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '5' },
  },
});
const EVENTS = Number(options.events);
const WEBHOOKS = Number(options.webhooks);
const OBJECTS = Math.max(1, Math.min(EVENTS, Number(options.objects)));

/** The receiver, in its own process so that it does not share this event loop. */
const RECEIVER = `
  const http = require('node:http');
  let count = 0;
  // /slow/… and /fast/… answer after the delays given; anything else at once.
  const [fastMs, slowMs] = process.argv.slice(-2).map(Number);
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') return res.end(String(count));
    const delay = req.url.startsWith('/slow/') ? slowMs : req.url.startsWith('/fast/') ? fastMs : 0;
    req.on('data', () => {});
    req.on('end', () => { count++; if (delay > 0) setTimeout(() => res.writeHead(200).end(), delay); else res.writeHead(200).end(); });
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

function startReceiver(): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-e', RECEIVER, '--', String(Number(options['fast-ms'])), String(Number(options['slow-ms']))], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('message', (port) => done({ child, port: Number(port) }));
    child.once('error', fail);
  });
}

/** User and system CPU time of this process, in microseconds per delivery. */
const perDelivery = (used: NodeJS.CpuUsage, count: number) => ((used.user + used.system) / count).toFixed(0);
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
function memory(label: string): NodeJS.MemoryUsage {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  console.log(`memory ${label.padEnd(7)} rss ${mb(usage.rss).padStart(9)}   heap used ${mb(usage.heapUsed).padStart(8)}`);
  return usage;
}

type Events = ReturnType<typeof webhookEvents>;

/** `count` customers with an address and metadata: the objects the events are about. */
async function seedCustomers(db: Knex, events: Events, tenant: Tenant, count: number): Promise<string[]> {
  const customers = customerService({ db, events, clock: () => new Date() });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const customer = await customers.create(
      tenant,
      { name: 'Maria Gonzalez', email: `maria.gonzalez.${i}@debt-collection.example`, external_id: `CUST-${100000 + i}`, address: { postal_code: '78704', line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX' }, metadata: { portfolio: 'spring-2026' } },
      new Set(['metadata', 'addresses']),
    );
    ids.push(customer.id);
  }
  return ids;
}

/** `count` customer.update events, round-robin over `objects`, 1000 to a transaction as a bulk change writes them. */
async function writeEvents(db: Knex, events: Events, tenant: Tenant, objects: string[], count: number): Promise<void> {
  for (let done = 0; done < count; done += 1000) {
    const ids = Array.from({ length: Math.min(1000, count - done) }, (_, i) => objects[(done + i) % objects.length]!);
    await db.transaction((trx) => events.record(trx, tenant, [{ name: 'customer.update', ids }]));
  }
}

/**
 * Waits until `webhookId` has `target` deliveries delivered; for every webhook (undefined),
 * until the queue is empty (a job is removed once its attempt is recorded), then checks that
 * `target` are delivered. A count of the delivered rows five times a second read every row
 * of the table each time, which at 400,000 took the database's time from the worker measured.
 */
async function deliveredBy(db: Knex, target: number, webhookId?: string, peak?: { rss: number }): Promise<void> {
  const delivered = async () => {
    const query = db('webhook_deliveries').whereNotNull('delivered_at');
    if (webhookId) query.where('webhook_id', webhookId);
    const [row] = await query.count<{ count: string }[]>({ count: '*' });
    return Number(row!.count);
  };
  const queued = async () => (await db('pgboss.job').where('name', 'webhook-delivery').first('id')) !== undefined;
  for (;;) {
    await new Promise((done) => setTimeout(done, 200));
    if (peak) peak.rss = Math.max(peak.rss, process.memoryUsage().rss);
    if (webhookId ? (await delivered()) >= target : !(await queued())) break;
  }
  const done = await delivered();
  if (done < target) throw new Error(`only ${done} of ${target} deliveries delivered`);
}

async function logSize(db: Knex): Promise<void> {
  const { rows } = await db.raw<{ rows: { events: string; heap: string; toast: string; indexes: string }[] }>(
    `SELECT (SELECT count(*) FROM webhook_events) AS events,
            pg_relation_size('webhook_events') AS heap,
            pg_total_relation_size('webhook_events') - pg_relation_size('webhook_events') - pg_indexes_size('webhook_events') AS toast,
            pg_indexes_size('webhook_events') AS indexes`,
  );
  const { events, heap, toast, indexes } = rows[0]!;
  const per = (bytes: string) => (Number(bytes) / Number(events)).toFixed(0);
  const [sample] = await db('webhook_events').where('name', 'customer.update').select('body', db.raw('pg_column_size(body) AS stored')).limit(1);
  console.log(
    `event log: ${events} events, ${per(String(Number(heap) + Number(toast) + Number(indexes)))} bytes per event ` +
      `(rows ${per(heap)}, TOAST ${per(toast)}, indexes ${per(indexes)}); a payload of ${Buffer.byteLength(eventBodyText(sample.body))} bytes of JSON text is stored in ${sample.stored}`,
  );
}

interface Bench {
  db: Knex;
  boss: Awaited<ReturnType<typeof startQueue>>;
  tenant: Tenant;
  secrets: SecretBox;
  config: ReturnType<typeof loadConfig>;
  logger: pino.Logger;
  receiverPort: number;
  events: Events;
}

async function addWebhook(bench: Bench, path: string, secret: string): Promise<{ id: string; url: string }> {
  const url = `http://127.0.0.1:${bench.receiverPort}${path}`;
  const row = await webhookRepo(bench.db, bench.tenant).insert({ url, events: ['customer.update'], secret_sealed: bench.secrets.encrypt(secret) });
  return { id: row.id, url };
}

async function throughput(bench: Bench): Promise<void> {
  const { db, events, tenant, receiverPort } = bench;
  const hooks = [];
  const hookSecrets = Array.from({ length: WEBHOOKS }, (_, i) => `bench_secret_${i}_0123456789`);
  for (let i = 0; i < WEBHOOKS; i++) hooks.push(await addWebhook(bench, `/hooks/${i}`, hookSecrets[i]!));
  const objects = await seedCustomers(db, events, tenant, OBJECTS);
  const writing = Date.now();
  await writeEvents(db, events, tenant, objects, EVENTS);
  const wrote = (Date.now() - writing) / 1000;
  const deliveries = EVENTS * WEBHOOKS;
  console.log(`outbox: ${EVENTS} events over ${OBJECTS} customers × ${WEBHOOKS} webhooks = ${deliveries} deliveries written in ${wrote.toFixed(1)} s (${(deliveries / wrote).toFixed(0)} per s)`);
  await logSize(db);

  const before = memory('before');
  const started = Date.now();
  const cpu = process.cpuUsage();
  const stats = newDeliveryStats();
  const worker = startWebhookWorker({ config: bench.config, db, logger: bench.logger, secrets: bench.secrets, boss: bench.boss }, { stats });
  const peak = { rss: 0 };
  await deliveredBy(db, deliveries, undefined, peak);
  const seconds = (Date.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await worker.stop();
  const received = await (await fetch(`http://127.0.0.1:${receiverPort}/`)).text();
  const rate = deliveries / seconds;
  console.log(`worker: ${stats.fetches} fetches in ${stats.fetchMs} ms (${(stats.fetchMs / Math.max(1, stats.fetches)).toFixed(1)} ms each); ${stats.batches} batches written in ${stats.recordMs} ms`);
  console.log(`delivered ${deliveries} in ${seconds.toFixed(1)} s: ${rate.toFixed(0)} deliveries per second (receiver counted ${received}); this process's CPU ${perDelivery(used, deliveries)} µs per delivery`);
  // PostgreSQL reports its counters a moment later.
  await new Promise((done) => setTimeout(done, 1000));
  const { rows: updates } = await db.raw<{ rows: { updated: string; hot: string }[] }>(
    `SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'webhook_deliveries'`,
  );
  console.log(`delivery rows updated: ${updates[0]!.updated}, of them in place (HOT, no index touched): ${updates[0]!.hot}`);
  const after = memory('after');
  console.log(`memory  change  rss ${mb(after.rss - before.rss).padStart(9)}   heap used ${mb(after.heapUsed - before.heapUsed).padStart(8)}   (peak rss while delivering ${mb(peak.rss)})`);
  const [stored] = await db('webhook_events').where('name', 'customer.update').select('body').limit(1);
  const bareCpu = process.cpuUsage();
  const bare = await bareLoop(deliveries, hooks.map((hook) => hook.url), decodeEventBody((stored as { body: Buffer }).body), hookSecrets);
  console.log(
    `baseline: bare loop, no database: ${deliveries} signed POSTs at ${bare.toFixed(0)} per second (CPU ${perDelivery(process.cpuUsage(bareCpu), deliveries)} µs per POST); ours ${(rate / bare).toFixed(2)} of it`,
  );
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The fast endpoint's rate alone, then beside a slow one, in rounds, in one run. */
async function isolation(bench: Bench): Promise<void> {
  const { db, events, tenant } = bench;
  const rounds = Math.max(1, Number(options.rounds));
  const objects = await seedCustomers(db, events, tenant, OBJECTS);
  const fast = await addWebhook(bench, '/fast/0', 'bench_secret_fast_0123456789');
  let delivered = 0;
  let slow: { id: string } | undefined;
  /** Where a phase's time went: jobs fetched, sent and put back by endpoint, batches written, the slow lane's move. */
  const where = (stats: DeliveryStats) => {
    const of = (id: string | undefined) => (id ? `fetched ${stats.fetched.get(id) ?? 0}, sent ${stats.sent.get(id) ?? 0}, put back ${stats.parked.get(id) ?? 0}` : '');
    return (
      `  fast: ${of(fast.id)}${slow ? `; slow: ${of(slow.id)}` : ''}; ${stats.fetches} fetches in ${stats.fetchMs} ms; ` +
      `${stats.batches} batches written in ${stats.recordMs} ms; slow lane marked in ${stats.markMs} ms`
    );
  };
  const phase = async (label: string, count = EVENTS) => {
    await writeEvents(db, events, tenant, objects, count);
    // Every phase from a vacuumed queue: the jobs deleted by the phase before (thousands at
    // once, when the slow webhook's are dropped) left dead rows that every fetch read until
    // autovacuum came, and the next phase ran at half its rate or less.
    await db.raw('VACUUM (ANALYZE) pgboss.job, webhook_deliveries');
    const { rows } = await db.raw<{ rows: { at: Date }[] }>('SELECT clock_timestamp() AS at');
    const stats = newDeliveryStats();
    const worker = startWebhookWorker({ config: bench.config, db, logger: bench.logger, secrets: bench.secrets, boss: bench.boss }, { stats });
    delivered += count;
    await deliveredBy(db, delivered, fast.id);
    const [last] = await db('webhook_deliveries').where({ webhook_id: fast.id }).max<{ at: Date }[]>({ at: 'delivered_at' });
    const rate = count / ((last!.at.getTime() - rows[0]!.at.getTime()) / 1000);
    console.log(`${label}: the fast endpoint (${options['fast-ms']} ms) got ${count} deliveries at ${rate.toFixed(0)} per second`);
    console.log(where(stats));
    await worker.stop();
    return rate;
  };
  // Untimed, so that every measured phase runs on a warm process (compiled code, open connections).
  await phase('warm-up', Math.ceil(EVENTS / 5));
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    if (slow) {
      // Alone: the slow webhook off, and what it still had waiting dropped, its deliveries
      // ended as failed (left unfinished, each would hold its object's later deliveries back
      // in the next round: fetched and put back every second, a write each).
      await db('webhooks').where({ id: slow.id }).update({ status: 'disabled' });
      await db('pgboss.job').where({ name: 'webhook-delivery' }).delete();
      await db('webhook_deliveries').where({ webhook_id: slow.id }).whereNull('delivered_at').whereNull('failed_at').update({ failed_at: db.fn.now() });
    }
    const alone = await phase(`round ${round}, alone`);
    if (slow) await db('webhooks').where({ id: slow.id }).update({ status: 'enabled' });
    else slow = await addWebhook(bench, '/slow/0', 'bench_secret_slow_0123456789');
    const beside = await phase(`round ${round}, beside a ${options['slow-ms']} ms endpoint${round === 1 ? ' (new: found slow in this round)' : ''}`);
    ratios.push(beside / alone);
    console.log(`round ${round}: ${(beside / alone).toFixed(2)}`);
  }
  const later = ratios.slice(1);
  console.log(
    `isolation: the fast endpoint's rate beside the slow one is ${median(ratios).toFixed(2)} of its rate alone ` +
      `(median of ${rounds} rounds: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}; round 1, while the slow endpoint was being found slow, ${ratios[0]!.toFixed(2)}` +
      `${later.length > 0 ? `; the later rounds' median ${median(later).toFixed(2)}` : ''})`,
  );
}

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-webhooks', 10);
  const { db } = scratch;
  const url = new URL(scratch.url);
  const receiver = await startReceiver();
  const logger = pino({ level: 'warn' });
  const boss = await startQueue(url.toString(), logger);
  try {
    const organization = await createOrganization(db, 'Bench Recovery');
    const tenant: Tenant = { organizationId: organization.organization_id, environment: 'production', tokenHash: '' };
    const secrets = new SecretBox(randomBytes(32));
    const config = { ...loadConfig({ PORT: '0' }), webhookAllowInsecureUrls: true };
    const bench: Bench = { db, boss, tenant, secrets, config, logger, receiverPort: receiver.port, events: webhookEvents(boss) };
    if (options.isolation) await isolation(bench);
    else await throughput(bench);
  } finally {
    await boss.stop({ graceful: false, wait: true });
    receiver.child.kill();
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
