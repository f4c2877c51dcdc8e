/**
 * npm run bench:charges — card charges per second through the whole service (POST /charges
 * with a saved card in the sandbox, each with its own Idempotency-Key), against POST
 * /customers with an Idempotency-Key in the same run, on the same database and server. Each
 * is loaded in turn by autocannon in a separate process; rounds alternate A B A B and medians
 * are printed, with the ratio against POST /customers.
 *
 * All charges go to one account (amount $1.00, the minimum, on a very large balance), so they queue on that
 * account's row lock as two payments of one debtor would; the figure is a floor.
 *
 *   npm run bench:charges [-- --seconds 5 --rounds 3 --connections 10]
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pino from 'pino';
import { createApp } from '../server/app';
import { loadConfig } from '../server/config';
import { SecretBox } from '../server/crypto/secrets';
import { startQueue } from '../server/jobs/queue';
import { createOrganization } from '../server/organizations/organization-repo';
import { webhookEvents } from '../server/webhooks/outbox';
import { openScratchDatabase } from './scratch-database';
import { serveForBench, type BenchServer } from './bench-server';
import { median } from './measure';

const root = resolve(__dirname, '..');
const run = promisify(execFile);
const { values: options } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, connections: { type: 'string', default: '10' } },
});

interface Result {
  requests: number;
  p99: number;
}

/**
 * autocannon's API in a child process (its command line cannot carry the `[<id>]` placeholder in
 * a header): every request gets an Idempotency-Key of its own.
 */
const RUNNER = `const run = require('autocannon');
run(JSON.parse(process.argv[1]), (error, result) => { if (error) throw error; process.stdout.write(JSON.stringify(result)); });`;

async function load(url: string, token: string, body: object): Promise<Result> {
  const settings = {
    url,
    connections: Number(options.connections),
    duration: Number(options.seconds),
    method: 'POST',
    idReplacement: true,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'bench-[<id>]' },
    body: JSON.stringify(body),
  };
  const { stdout } = await run(process.execPath, ['-e', RUNNER, JSON.stringify(settings)], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  const report = JSON.parse(stdout) as { requests: { average: number }; latency: { p99: number }; non2xx: number; errors: number };
  if (report.non2xx > 0 || report.errors > 0) throw new Error(`${url}: ${report.non2xx} non-2xx answers, ${report.errors} errors`);
  return { requests: report.requests.average, p99: report.latency.p99 };
}

async function post(base: string, token: string, path: string, body: object): Promise<{ data: { id: string } }> {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as { data: { id: string } };
}

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench-charges', 20);
  const { db } = scratch;
  let served: BenchServer | undefined;
  let stopQueue = async () => {};
  try {
    const organization = await createOrganization(db, 'Bench Recovery');
    const token = organization.sandbox_token;
    const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
    const boss = await startQueue(scratch.url, logger);
    stopQueue = () => boss.stop({ graceful: false, wait: true });
    const config = { ...loadConfig({ PORT: '0' }), rateLimitPerMinute: 1_000_000_000 };
    const app = createApp({ config, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: webhookEvents(boss), files: diskFileStore(config.dataDir) });
    served = await serveForBench(app);
    const { base } = served;

    const customer = (await post(base, token, '/customers', { name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example' })).data;
    const account = (await post(base, token, '/debt-accounts', { customer_id: customer.id, location_id: 'LOC-BENCH', location_name: 'Bench Location', balance: 100_000_000_000 })).data;
    const card = { card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_expiration_month: 8, card_expiration_year: (new Date().getUTCFullYear() + 3) % 100 };
    const method = (await post(base, token, `/customers/${customer.id}/payment-methods`, { card })).data;

    const targets = [
      { label: 'POST /customers', url: `${base}/customers`, body: { name: 'Dana Whitfield', email: 'dana.whitfield@debt-collection.example' }, results: [] as Result[] },
      { label: 'POST /charges (card)', url: `${base}/charges`, body: { amount: 100, debt_account_id: account.id, payment_method_id: method.id }, results: [] as Result[] },
    ];
    // Each load starts on a quiet server: the charges the previous one left in flight done.
    const measured = async (target: (typeof targets)[number]) => {
      const result = await load(target.url, token, target.body);
      await served!.settled();
      return result;
    };
    for (const target of targets) await measured(target); // warm-up
    for (let round = 0; round < Number(options.rounds); round++) {
      for (const target of targets) target.results.push(await measured(target));
    }
    const baseline = median(targets[0]!.results.map((r) => r.requests));
    console.log(`with Idempotency-Key, sandbox gateway: ${options.rounds} rounds of ${options.seconds}s, ${options.connections} connections, medians (${scratch.source})`);
    console.log('operation                 req/s   p99 ms   vs POST /customers');
    for (const target of targets) {
      const requests = median(target.results.map((r) => r.requests));
      const p99 = median(target.results.map((r) => r.p99));
      console.log(`${target.label.padEnd(22)} ${requests.toFixed(0).padStart(7)} ${p99.toFixed(1).padStart(8)} ${(requests / baseline).toFixed(2).padStart(20)}`);
    }
    const charged = await db('charges').count('* as n').first();
    console.log(`charges made: ${charged!.n}`);
  } finally {
    // As the server stops: the requests the last round left in flight answered, then the pools.
    await served?.stop();
    await stopQueue();
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
