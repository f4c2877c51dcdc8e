/**
 * `npm start` stopped by SIGTERM while it is busy, STOP_ROUNDS times over on a machine this test keeps
 * busy itself (processes spinning on every core while the server is under load and stopping;
 * paused while it starts, which is not what is tested): requests arriving on kept-alive connections,
 * charges (ACH debits whose settlement jobs are queued), and webhook deliveries held open by a
 * slow receiver. Each time, within the 15 s a stop may take, npm, the server and the embedded
 * PostgreSQL are gone, no lock or pid file is left, and the next start finds the data folder free.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../server/kernel/net';
import { alive, embeddedEnv, postmasterPid, root, spawnProcess, waitForHealth, type Spawned } from '../support/processes';

const run = promisify(execFile);
/**
 * Three in every `npm test` (a stop is cut short seldom, so one run proves little either way);
 * STOP_ROUNDS=10 or more for the longer hunt, e.g. while another `npm test` keeps the machine busy.
 */
const ROUNDS = Number(process.env.STOP_ROUNDS ?? 3);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`STOP_ROUNDS must be a whole number of at least 1, not "${process.env.STOP_ROUNDS}"`);
/** How long a stop may take, requests, jobs and deliveries in flight or not. */
const STOP_WITHIN_MS = 15_000;
const dataDir = join(root, '.data', `stop-under-load-${process.pid}`);
const spawned: Spawned[] = [];
const spinners: ChildProcess[] = [];
let receiver: Server;
let receiverPort: number;
const held = new Set<NodeJS.Timeout>();

beforeAll(async () => {
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  // One process spinning per core, paused until a round's load begins.
  for (let i = 0; i < Math.max(2, availableParallelism()); i++) {
    const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    spinner.kill('SIGSTOP');
    spinners.push(spinner);
  }
  // A webhook endpoint that holds every delivery for 3 seconds: deliveries are in flight at the stop.
  receiver = createServer((req, res) => {
    req.resume();
    const timer = setTimeout(() => (held.delete(timer), res.end('ok')), 3000);
    held.add(timer);
  });
  receiverPort = await freePort();
  await new Promise<void>((done) => receiver.listen(receiverPort, '127.0.0.1', done));
});

afterAll(async () => {
  for (const spinner of spinners) spinner.kill('SIGKILL');
  for (const started of spawned) started.killAll();
  if (existsSync(join(dataDir, 'pg', 'postmaster.pid')) && alive(postmasterPid(dataDir))) process.kill(postmasterPid(dataDir), 'SIGQUIT');
  for (const timer of held) clearTimeout(timer);
  receiver?.closeAllConnections();
  await new Promise((done) => receiver?.close(done));
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm start` in a process group of its own, as a terminal runs it; with its server's pid. */
async function npmStart(port: number): Promise<{ npm: Spawned; server: number }> {
  const npm = spawnProcess('npm', ['start'], embeddedEnv(dataDir, { PORT: String(port), LOG_LEVEL: 'warn', WEBHOOK_ALLOW_INSECURE_URLS: 'true', SANDBOX_ACH_SETTLEMENT_SECONDS: '1' }), true);
  spawned.push(npm);
  await waitForHealth(port, 180_000);
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(npm.child.pid)]);
  return { npm, server: Number(stdout.trim().split('\n')[0]) };
}

/** Requests on kept-alive connections, as fast as the server answers, until `stop()`. */
function load(port: number, token: string): { stop: () => Promise<number> } {
  let stopping = false;
  let answered = 0;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const api = (path: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${port}/api/v1${path}`, { method: body ? 'POST' : 'GET', headers, body: body ? JSON.stringify(body) : undefined }).then(async (response) => {
      answered++;
      return (await response.json()) as { data?: { id: string } };
    });
  const ach = { account_holder: 'Dana Whitfield', account_type: 'checking', routing_number: '011000015', account_number: '000123456789', account_zip: '78704', account_state: 'TX' };
  const worker = async (i: number) => {
    while (!stopping) {
      try {
        const customer = await api('/customers', { name: `Dana Whitfield ${i}`, email: `dana${i}@mail.debt-collection.example` });
        const account = await api('/debt-accounts', { customer_id: customer.data!.id, location_id: 'LOC-LOAD-01', location_name: 'Load Clinic', balance: 50000 });
        await api('/charges', { debt_account_id: account.data!.id, amount: 1000, ach });
        await api('/customers?per_page=5');
      } catch {
        // Refused or cut off by the stop: what this test looks at is what is left afterwards.
        await new Promise((done) => setTimeout(done, 20));
      }
    }
  };
  const workers = Array.from({ length: 6 }, (_, i) => worker(i));
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(workers);
      return answered;
    },
  };
}

async function exitWithin(npm: Spawned, ms: number): Promise<number | null | 'still running'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still running'>((done) => (timer = setTimeout(() => done('still running'), ms)));
  try {
    return await Promise.race([npm.exited, late]);
  } finally {
    // The process ended in time: its deadline must not hold the worker open after the file.
    clearTimeout(timer);
  }
}

test(`SIGTERM to npm start under load, ${ROUNDS} times on a busy machine: everything stops within 15 s, nothing is left`, async () => {
  let token = '';
  for (let round = 1; round <= ROUNDS; round++) {
    const port = await freePort();
    const { npm, server } = await npmStart(port);
    if (!token) {
      const created = await run(process.execPath, ['--import', 'tsx', 'scripts/org.ts', 'create', '--name', 'Busy Recovery LLC'], { cwd: root, env: embeddedEnv(dataDir) });
      token = (JSON.parse(created.stdout) as { sandbox_token: string }).sandbox_token;
      const hook = await fetch(`http://127.0.0.1:${port}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${receiverPort}/hooks`, events: ['customer.create', 'debt-account.create', 'charge.succeeded'], secret: 'wh_sec_busy_test_0001' }),
      });
      expect(hook.status).toBe(201);
    }
    const postgres = postmasterPid(dataDir);
    // The machine busy from here to the end of the stop.
    for (const spinner of spinners) spinner.kill('SIGCONT');
    const busy = load(port, token);
    // Busy for a moment: requests in flight, deliveries held by the receiver, jobs queued.
    await new Promise((done) => setTimeout(done, 1500 + round * 100));

    npm.child.kill('SIGTERM');
    const exit = await exitWithin(npm, STOP_WITHIN_MS);
    const answered = await busy.stop();
    for (const spinner of spinners) spinner.kill('SIGSTOP');
    expect({ round, exit, left: [npm.child.pid!, server, postgres].filter(alive) }).toEqual({ round, exit: 0, left: [] });
    expect({ round, lock: existsSync(join(dataDir, 'embedded-postgres.lock')), pid: existsSync(join(dataDir, 'pg', 'postmaster.pid')) }).toEqual({ round, lock: false, pid: false });
    expect(answered).toBeGreaterThan(0);
  }
}, 900_000);
