/**
 * The first start and the stops as people meet them, with real processes: two servers and
 * org:create at once on a fresh DATA_DIR; `npm start` stopped by a terminal's Ctrl-C (SIGINT to
 * its whole process group) with a request in flight, and by SIGTERM to the npm process alone.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../server/kernel/net';
import { alive, embeddedEnv, errorLines, postmasterPid, root, spawnProcess, spawnServer, waitForHealth, type Spawned } from '../support/processes';

const run = promisify(execFile);
const dataDir = join(root, '.data', `start-stop-${process.pid}`);
const spawned: Spawned[] = [];

beforeAll(() => mkdirSync(dataDir, { recursive: true, mode: 0o755 }));
afterAll(() => {
  for (const started of spawned) started.killAll();
  if (existsSync(join(dataDir, 'pg', 'postmaster.pid')) && alive(postmasterPid(dataDir))) process.kill(postmasterPid(dataDir), 'SIGQUIT');
  rmSync(dataDir, { recursive: true, force: true });
});

/** A sandbox token of the organization the first test creates; the cluster keeps it. */
let token: string;

const customers = (port: number, bearer: string) =>
  fetch(`http://127.0.0.1:${port}/api/v1/customers`, { headers: { authorization: `Bearer ${bearer}` } });

test('two servers and org:create started together on a fresh DATA_DIR share one cluster, and the last one out stops it', async () => {
  const [portA, portB] = [await freePort(), await freePort()];
  const a = spawnServer(embeddedEnv(dataDir, { PORT: String(portA) }));
  const b = spawnServer(embeddedEnv(dataDir, { PORT: String(portB) }));
  spawned.push(a, b);
  const created = await run(process.execPath, ['--import', 'tsx', 'scripts/org.ts', 'create', '--name', 'Acme Recovery LLC'], {
    cwd: root,
    env: embeddedEnv(dataDir),
  });
  token = (JSON.parse(created.stdout) as { sandbox_token: string }).sandbox_token;
  await Promise.all([waitForHealth(portA), waitForHealth(portB)]);
  expect((await customers(portA, token)).status).toBe(200);
  expect((await customers(portB, token)).status).toBe(200);
  const postgres = postmasterPid(dataDir);

  a.child.kill('SIGTERM');
  expect(await a.exited).toBe(0);
  expect(a.output()).toContain('keeps running for 1 other process');
  expect((await customers(portB, token)).status).toBe(200);

  b.child.kill('SIGTERM');
  expect(await b.exited).toBe(0);
  expect(b.output()).toContain('stopped the embedded PostgreSQL');
  expect(alive(postgres)).toBe(false);
  expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  expect([...errorLines(a.output()), ...errorLines(b.output())]).toEqual([]);
}, 180_000);

/** `npm start` in a process group of its own, as a terminal runs it; with its server's and PostgreSQL's pids. */
async function npmStart(port: number): Promise<{ npm: Spawned; pids: number[] }> {
  const npm = spawnProcess('npm', ['start'], embeddedEnv(dataDir, { PORT: String(port) }), true);
  spawned.push(npm);
  await waitForHealth(port);
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(npm.child.pid)]);
  const children = stdout.split('\n').map(Number).filter(Boolean);
  // No shell nor tsx between npm and the server: npm's one child is node running server/main.ts.
  expect(children).toHaveLength(1);
  const { stdout: args } = await run('ps', ['-o', 'args=', '-p', String(children[0])]);
  expect(args.trim()).toBe('node --import tsx server/main.ts');
  return { npm, pids: [npm.child.pid!, children[0]!, postmasterPid(dataDir)] };
}

async function gone(port: number, pids: number[]): Promise<void> {
  await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  expect(pids.filter(alive)).toEqual([]);
  expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
}

test("Ctrl-C (SIGINT to npm start's process group) finishes the request in flight, then stops everything without an error line", async () => {
  const port = await freePort();
  const { npm, pids } = await npmStart(port);

  // A request whose body is still arriving when the signal comes: its headers are in the
  // server's hands once a later request on another connection has been answered.
  const body = JSON.stringify({ name: 'Maria Gonzalez', email: 'maria.gonzalez@mail.example' });
  let sent!: () => void;
  const started = new Promise<void>((done) => (sent = done));
  const answered = new Promise<{ status: number; text: string }>((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/v1/customers', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => done({ status: res.statusCode!, text }));
      },
    );
    req.on('error', fail);
    req.flushHeaders();
    req.write(body.slice(0, 10), () => sent());
    npm.waitFor('stopping: finishing requests in flight').then(() => req.end(body.slice(10)), fail);
  });
  await started;
  expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  process.kill(-npm.child.pid!, 'SIGINT');
  const { status, text } = await answered;
  expect({ status, name: (JSON.parse(text) as { data: { name: string } }).data.name }).toEqual({ status: 201, name: 'Maria Gonzalez' });

  expect(await npm.exited).toBe(0);
  await gone(port, pids);
  expect(npm.output()).toContain('stopped the embedded PostgreSQL');
  expect(errorLines(npm.output())).toEqual([]);
}, 180_000);

test('SIGTERM to the npm process alone stops the server and the database, leaving no process behind', async () => {
  const port = await freePort();
  const { npm, pids } = await npmStart(port);
  npm.child.kill('SIGTERM');
  expect(await npm.exited).toBe(0);
  await gone(port, pids);
  expect(npm.output()).toContain('"signal":"SIGTERM"');
  expect(errorLines(npm.output())).toEqual([]);
}, 180_000);

test('WEB_CONCURRENCY=2: two server processes serve one port; SIGTERM to npm stops both, then the database, and exits 0', async () => {
  const port = await freePort();
  const npm = spawnProcess('npm', ['start'], embeddedEnv(dataDir, { PORT: String(port), WEB_CONCURRENCY: '2' }), true);
  spawned.push(npm);
  await waitForHealth(port);
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(npm.child.pid)]);
  const supervisor = stdout.split('\n').map(Number).find(Boolean)!;
  const { stdout: children } = await run('ps', ['-o', 'pid=', '--ppid', String(supervisor)]);
  const servers = children.split('\n').map(Number).filter(Boolean);
  expect(servers).toHaveLength(2);
  await npm.waitFor('serving /api/v1');
  for (let i = 0; i < 6; i++) expect((await customers(port, token)).status).toBe(200);
  const pids = [npm.child.pid!, supervisor, ...servers, postmasterPid(dataDir)];

  npm.child.kill('SIGTERM');
  expect(await npm.exited).toBe(0);
  await gone(port, pids);
  expect(npm.output().match(/"msg":"stopped"/g)?.length).toBe(3);
  expect(npm.output()).toContain('stopped the embedded PostgreSQL');
  expect(errorLines(npm.output())).toEqual([]);
}, 180_000);
