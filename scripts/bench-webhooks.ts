/**
 * npm run bench:webhooks — deliveries per second from the outbox to a local receiver, and the
 * memory of the delivering process before and after.
 *
 * N events (default 10,000 customer.update events with a real customer's payload) are
 * written to the outbox through emitEvents, as the services write them, for W webhooks
 * (default 4) that all subscribe, so N × W deliveries. Then one delivery worker, in this
 * process, as `npm start` runs it, delivers them to a receiver in a child process (answering
 * 200 on keep-alive connections). The clock runs from the worker's start until the last
 * delivery is recorded as delivered in the database.
 *
 * Baseline, in the same run: the same number of signed POSTs of the same body to the same
 * receiver, by a bare loop with no database and no queue (same sender, same concurrency as the
 * worker), and our rate as a ratio of it.
 *
 *   npm run bench:webhooks [-- --events 10000 --webhooks 4]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../server/config';
import { SecretBox } from '../server/crypto/secrets';
import { customerService } from '../server/customers/customer-service';
import type { Tenant } from '../server/http/auth';
import { openScratchDatabase } from './scratch-database';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { startWebhookWorker } from '../server/webhooks/delivery-worker';
import { webhookEvents } from '../server/webhooks/outbox';
import { webhookRepo } from '../server/webhooks/webhook-repo';
import { postWebhook } from '../server/webhooks/sender';
import { signWebhookBody } from '../client/webhooks';

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
      const headers = {
        'Content-Type': 'application/json',
        'User-Agent': 'debt-collection-service-webhooks/1',
        'X-Service-Event-Name': 'customer.update',
        'X-Service-Webhook-ID': `bare-${hook}`,
        'X-Service-Delivery-ID': `bare-${i}`,
        'X-Service-Signature-256': signWebhookBody(body, secrets[hook]!),
      };
      const result = await postWebhook(urls[hook]!, headers, body, { timeoutMs: 10_000, allowInsecure: true });
      if (!result.ok) throw new Error(`bare loop: ${result.error ?? result.status}`);
    }
  };
  await Promise.all(Array.from({ length: BARE_CONCURRENCY }, lane));
  return total / ((Date.now() - started) / 1000);
}

const { values: options } = parseArgs({ options: { events: { type: 'string', default: '10000' }, webhooks: { type: 'string', default: '4' } } });
const EVENTS = Number(options.events);
const WEBHOOKS = Number(options.webhooks);

/** The receiver, in its own process so that it does not share this event loop. */
const RECEIVER = `
  const http = require('node:http');
  let count = 0;
  const server = http.createServer((req, res) => {
    if (req.method === 'GET') return res.end(String(count));
    req.on('data', () => {});
    req.on('end', () => { count++; res.writeHead(200).end(); });
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

function startReceiver(): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (port) => done({ child, port: Number(port) }));
    child.once('error', fail);
  });
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
function memory(label: string): NodeJS.MemoryUsage {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  console.log(`memory ${label.padEnd(7)} rss ${mb(usage.rss).padStart(9)}   heap used ${mb(usage.heapUsed).padStart(8)}`);
  return usage;
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
    const hookUrls = Array.from({ length: WEBHOOKS }, (_, i) => `http://127.0.0.1:${receiver.port}/hooks/${i}`);
    const hookSecrets = Array.from({ length: WEBHOOKS }, (_, i) => `bench_secret_${i}_0123456789`);
    for (let i = 0; i < WEBHOOKS; i++) {
      await webhookRepo(db, tenant).insert({ url: hookUrls[i]!, events: ['customer.update'], secret_sealed: secrets.encrypt(hookSecrets[i]!) });
    }
    const events = webhookEvents(boss);
    const customer = await customerService({ db, events, clock: () => new Date() }).create(
      tenant,
      { name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example', external_id: 'CUST-100482', address: { postal_code: '78704', line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX' }, metadata: { portfolio: 'spring-2026' } },
      new Set(['metadata', 'addresses']),
    );
    // Only the events under test: the create above delivered nothing (no webhook wanted it).
    const writing = Date.now();
    for (let done = 0; done < EVENTS; done += 1000) {
      const count = Math.min(1000, EVENTS - done);
      await db.transaction((trx) => events.record(trx, tenant, [{ name: 'customer.update', ids: Array.from({ length: count }, () => customer.id) }]));
    }
    const wrote = (Date.now() - writing) / 1000;
    const deliveries = EVENTS * WEBHOOKS;
    console.log(`outbox: ${EVENTS} events × ${WEBHOOKS} webhooks = ${deliveries} deliveries written in ${wrote.toFixed(1)} s (${(deliveries / wrote).toFixed(0)} per s)`);

    const before = memory('before');
    const started = Date.now();
    const worker = startWebhookWorker({ config, db, logger, secrets, boss });
    let delivered = 0;
    let peakRss = 0;
    while (delivered < deliveries) {
      await new Promise((done) => setTimeout(done, 200));
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      const [row] = await db('webhook_deliveries').whereNotNull('delivered_at').count<{ count: string }[]>({ count: '*' });
      delivered = Number(row!.count);
    }
    const seconds = (Date.now() - started) / 1000;
    await worker.stop();
    const received = await (await fetch(`http://127.0.0.1:${receiver.port}/`)).text();
    const rate = deliveries / seconds;
    console.log(`delivered ${deliveries} in ${seconds.toFixed(1)} s: ${rate.toFixed(0)} deliveries per second (receiver counted ${received})`);
    const after = memory('after');
    console.log(`memory  change  rss ${mb(after.rss - before.rss).padStart(9)}   heap used ${mb(after.heapUsed - before.heapUsed).padStart(8)}   (peak rss while delivering ${mb(peakRss)})`);
    const [stored] = await db('webhook_events').select('payload').limit(1);
    const bare = await bareLoop(deliveries, hookUrls, (stored as { payload: unknown }).payload, hookSecrets);
    console.log(`baseline: bare loop, no database: ${deliveries} signed POSTs at ${bare.toFixed(0)} per second; ours ${(rate / bare).toFixed(2)} of it`);
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
