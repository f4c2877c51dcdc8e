/**
 * What an operator sees when the start cannot go ahead, or not yet: one clear line and exit
 * code 1 for a wrong environment, a busy port or a wrong database (never a stack), and a
 * database that is still coming up waited for, with a line per try.
 */
import { createServer, connect as tcpConnect, type Server } from 'node:net';
import { loadConfig } from '../../server/kernel/config';
import { connect } from '../../server/db/database';
import { freePort } from '../../server/kernel/net';
import { errorLines, spawnServer, startServerProcess, waitForHealth, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';

function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, LOG_LEVEL: 'info', DATA_DIR: '/nonexistent/never-used', ...extra };
}

async function fails(extra: NodeJS.ProcessEnv): Promise<string> {
  const server = spawnServer(env(extra));
  expect(await server.exited).toBe(1);
  expect(server.output()).not.toMatch(/^\s+at /m);
  return server.output();
}

const adminUrl = () => new URL(process.env.TEST_ADMIN_DATABASE_URL!);

describe('the environment is checked before anything starts', () => {
  test('a LOG_LEVEL pino does not know', async () => {
    expect(await fails({ LOG_LEVEL: 'verbose' })).toBe(
      'Could not start: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "verbose"\n',
    );
  });

  test('a DATABASE_URL that is not a postgres URL, without echoing it (it may hold a password)', () => {
    expect(() => loadConfig({ DATABASE_URL: 'notaurl' })).toThrow('DATABASE_URL must be a URL like postgres://user:password@host:5432/database');
    expect(() => loadConfig({ DATABASE_URL: 'mysql://root:s3cret@db/app' })).toThrow(/^(?!.*s3cret)DATABASE_URL must be/);
    expect(loadConfig({ DATABASE_URL: 'postgresql://app:pw@db.internal:5432/app' }).databaseUrl).toBe('postgresql://app:pw@db.internal:5432/app');
    expect(() => loadConfig({ DATABASE_WAIT_SECONDS: 'soon' })).toThrow('DATABASE_WAIT_SECONDS must be a whole number from 0 to 3600, not "soon"');
  });
});

test('a busy port is found before the database is even waited for', async () => {
  const blocker: Server = createServer();
  const port = await freePort();
  await new Promise<void>((done) => blocker.listen(port, '0.0.0.0', done));
  try {
    const nobody = await freePort();
    const output = await fails({ PORT: String(port), DATABASE_URL: `postgres://postgres:x@127.0.0.1:${nobody}/app` });
    expect(output).toBe(`Could not start: Port ${port} is already in use; set PORT to another one.\n`);
  } finally {
    blocker.close();
  }
});

test('a database that does not exist is one clear line, at once', async () => {
  const url = adminUrl();
  url.pathname = '/no_such_database';
  const output = await fails({ PORT: '0', DATABASE_URL: url.toString() });
  expect(output).toBe('Could not start: the database refused the connection: database "no_such_database" does not exist\n');
});

test('a database that never comes up is waited for DATABASE_WAIT_SECONDS, a line per try, then one clear line', async () => {
  const nobody = await freePort();
  const output = await fails({ PORT: '0', DATABASE_URL: `postgres://postgres:x@127.0.0.1:${nobody}/app`, DATABASE_WAIT_SECONDS: '2' });
  const lines = output.trim().split('\n');
  expect(lines.at(-1)).toBe(`Could not start: the database did not answer within 2 s: connect ECONNREFUSED 127.0.0.1:${nobody}`);
  const tries = lines.slice(0, -1).map((line) => (JSON.parse(line) as { msg: string }).msg);
  expect(tries.length).toBeGreaterThanOrEqual(1);
  expect(tries[0]).toBe(`waiting for the database (try 1, at most 2 s): connect ECONNREFUSED 127.0.0.1:${nobody}`);
});

test('a database that comes up while the server waits is used, and the server serves', async () => {
  const database = await createTestDatabase();
  const real = new URL(database.url);
  const port = await freePort();
  const late = await freePort();
  const url = new URL(database.url);
  url.port = String(late);
  const server = spawnServer(env({ PORT: String(port), DATABASE_URL: url.toString() }));
  // The database "comes up": a TCP relay to the real one starts listening on the awaited port.
  const relay = createServer((socket) => {
    const upstream = tcpConnect(Number(real.port), real.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  try {
    await server.waitFor('waiting for the database (try 1');
    await new Promise<void>((done) => relay.listen(late, '127.0.0.1', done));
    await waitForHealth(port);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
  } finally {
    server.child.kill('SIGKILL');
    relay.close();
    await database.drop();
  }
}, 120_000);

test('processes that could open more connections than the database allows are warned of at start, in one line; those that fit are not', async () => {
  const database = await createTestDatabase();
  const admin = connect(database.url, 1);
  const [{ max, reserved }] = (await admin.raw(`SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved`)).rows;
  await admin.destroy();
  const allowed = max - reserved;
  // One process just past what the database allows (the embedded one: 200 less 3, so a pool of
  // 194), or as few processes of 200 as pass it on a larger server; and one process that fits exactly.
  const processes = Math.max(1, Math.ceil((allowed + 1) / 204));
  const pool = Math.max(10, Math.ceil((allowed + 1) / processes) - 4);
  const fitting = Math.min(200, allowed - 4);
  const started: Spawned[] = [];
  try {
    const warned = await startServerProcess(database.url, { DATABASE_POOL_MAX: String(pool), WEB_CONCURRENCY: String(processes) });
    started.push(warned.server);
    const warnings = () =>
      warned.server
        .output()
        .split('\n')
        .filter((line) => line.includes('connections at the busiest'))
        .map((line) => JSON.parse(line) as { level: number; msg: string });
    // With WEB_CONCURRENCY > 1 the first process to serve may not be the one that warns: all of them serve.
    for (let waited = 0; warnings().length === 0 && waited < 30_000; waited += 100) await new Promise((done) => setTimeout(done, 100));
    expect(warnings()).toEqual([
      expect.objectContaining({
        level: 40,
        msg:
          `WEB_CONCURRENCY ${processes} × (DATABASE_POOL_MAX ${pool} + 4 for the job queue) = ${processes * (pool + 4)} connections at the busiest, but the database allows ${allowed} ` +
          `(max_connections ${max} less ${reserved} kept for superusers): lower DATABASE_POOL_MAX (10 at least) or WEB_CONCURRENCY, or raise max_connections`,
      }),
    ]);
    const fits = await startServerProcess(database.url, { DATABASE_POOL_MAX: String(fitting) });
    started.push(fits.server);
    expect(fits.server.output()).not.toContain('connections at the busiest');
    for (const { server } of [warned, fits]) {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  } finally {
    for (const server of started) server.child.kill('SIGKILL');
    await database.drop();
  }
}, 120_000);
