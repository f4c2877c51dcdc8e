/**
 * /livez and /readyz of a real server process: alive and not ready while it waits to migrate
 * an empty database (another process holds the migrations' lock), a request sent meanwhile
 * answered once it is ready; ready once migrated and its workers started; and 503 `draining`
 * from the first moment of a SIGTERM, on a connection whose request was in flight.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect, STARTUP_LOCKS } from '../../server/db/database';
import { errorLines, spawnServer, type Spawned } from '../support/processes';
import { eventually } from '../support/webhooks';

const adminUrl = () => process.env.TEST_ADMIN_DATABASE_URL!;
let server: Spawned | undefined;
let databaseName: string | undefined;

afterAll(async () => {
  server?.killAll();
  if (databaseName) {
    const admin = connect(adminUrl(), 1);
    await admin.raw(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.destroy();
  }
});

/** The port a starting server listens on, from its first line (at LOG_LEVEL=debug). */
async function startingPort(spawned: Spawned): Promise<number> {
  await spawned.waitFor('"msg":"starting:', 90_000);
  const line = spawned.output().split('\n').find((each) => each.includes('"msg":"starting:'))!;
  return (JSON.parse(line) as { port: number }).port;
}

const probe = async (port: number, path: string) => {
  const answer = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { connection: 'close' } });
  return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
};

/** Everything a raw connection receives until `text` is among it. */
function received(socket: Socket): { text(): string; until(text: string): Promise<void>; ended: Promise<void> } {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const ended = new Promise<void>((done) => socket.once('close', () => done()));
  return {
    text: () => text,
    until: (wanted) => eventually(() => text.includes(wanted) || undefined, `"${wanted}" on the connection`).then(() => undefined),
    ended,
  };
}

test('a start on an empty database: alive, 503 while it waits to migrate, a request held meanwhile answered once ready; then 503 draining from the first moment of SIGTERM', async () => {
  databaseName = `dcs_readyz_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl(), 1);
  await admin.raw(`CREATE DATABASE "${databaseName}"`);
  await admin.destroy();
  const url = new URL(adminUrl());
  url.pathname = `/${databaseName}`;

  // Another process migrating: the server waits for the migrations' lock.
  const holder = new pg.Client({ connectionString: url.toString() });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCKS.migrations]);
  let released = false;
  try {
    // At debug, the first line names the port the system chose.
    server = spawnServer({ ...process.env, DATABASE_URL: url.toString(), PORT: '0', LOG_LEVEL: 'debug' });
    const port = await startingPort(server);

    expect(await probe(port, '/livez')).toEqual({ status: 200, body: { status: 'ok' } });
    const waiting = await eventually(async () => {
      const answer = await probe(port, '/readyz');
      return answer.body.database === 'ok' ? answer : undefined;
    }, 'the database opened');
    expect(waiting).toEqual({ status: 503, body: { status: 'not_ready', database: 'ok', migrations: 'pending', workers: 'starting', draining: false } });
    // Sent before the service is ready: held, then answered by it.
    const held = fetch(`http://127.0.0.1:${port}/health`, { headers: { connection: 'close' } });

    await holder.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCKS.migrations]);
    released = true;
    const ready = await eventually(async () => {
      const answer = await probe(port, '/readyz');
      return answer.status === 200 ? answer : undefined;
    }, 'ready', 90_000);
    expect(ready.body).toEqual({ status: 'ready', database: 'ok', migrations: 'current', workers: 'started', draining: false });
    const health = await held;
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });

    // A request in flight when the stop comes: its headers parsed (the server said 100 Continue),
    // its body not yet sent. A probe sent behind it on the same connection, after the SIGTERM.
    const socket = netConnect(port, '127.0.0.1');
    const connection = received(socket);
    socket.write('POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    await connection.until('100 Continue');
    server.child.kill('SIGTERM');
    await server.waitFor('stopping: finishing requests in flight');
    socket.write('{}GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await connection.ended;
    const answers = connection.text().split(/(?=HTTP\/1\.1 )/);
    // The request in flight answered as usual (no token: 401), then the probe: not ready, draining.
    expect(answers.map((answer) => answer.split('\r\n')[0])).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 401 Unauthorized', 'HTTP/1.1 503 Service Unavailable']);
    expect(answers[2]).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(answers[2]!.split('\r\n\r\n')[1]!)).toEqual({ status: 'not_ready', database: 'ok', migrations: 'current', workers: 'started', draining: true });
    expect(await server.exited).toBe(0);
    expect(errorLines(server.output())).toEqual([]);
  } finally {
    if (!released) await holder.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCKS.migrations]).catch(() => {});
    await holder.end();
  }
}, 240_000);
