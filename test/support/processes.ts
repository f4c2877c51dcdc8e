/**
 * Real processes for the operating tests: the server as `npm start` or as node itself, its
 * output, its health, and whether a process is still there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createApiClient, type ApiClient } from '../../client';
import { alive } from '../../server/db/dir-lock';

export { alive };

export const root = resolve(__dirname, '../..');

export interface Spawned {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Resolves once the output holds `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  /** Killed at once with all it started (a detached `npm start`'s server too: its whole group). */
  killAll(): void;
}

export function spawnProcess(command: string, args: string[], env: NodeJS.ProcessEnv, detached = false): Spawned {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    output: () => output,
    exited,
    killAll: () => {
      try {
        if (detached) process.kill(-child.pid!, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    },
    waitFor: async (text, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!output.includes(text)) {
        if (Date.now() > deadline) throw new Error(`no "${text}" in:\n${output}`);
        await new Promise((done) => setTimeout(done, 50));
      }
    },
  };
}

/** The environment of a server on the embedded database under `dataDir`. */
export function embeddedEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extra };
  delete env.DATABASE_URL;
  return env;
}

/** The server as node itself, tsx as a loader: signals reach the server and not a wrapper. */
export function spawnServer(env: NodeJS.ProcessEnv): Spawned {
  return spawnProcess(process.execPath, ['--import', 'tsx', 'server/main.ts'], env);
}

/**
 * A server process on the database at `databaseUrl`, once it serves, and its port. The system
 * chooses the port (PORT=0) and the server's own "serving" line names it: a port found free
 * beforehand may be taken by another process of this busy machine before the server binds it,
 * and /health could then be answered by that other process.
 */
export async function startServerProcess(databaseUrl: string, extra: NodeJS.ProcessEnv = {}, timeoutMs = 90_000): Promise<{ server: Spawned; port: number }> {
  const server = spawnServer({ ...process.env, DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'info', ...extra });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const serving = server
      .output()
      .split('\n')
      .slice(0, -1)
      .find((line) => line.includes('"msg":"serving /api/v1"'));
    if (serving) return { server, port: (JSON.parse(serving) as { port: number }).port };
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`the server ended before serving:\n${server.output()}`);
    if (Date.now() > deadline) {
      server.child.kill('SIGKILL');
      throw new Error(`the server did not serve within ${timeoutMs / 1000} s:\n${server.output()}`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
}

/**
 * The API client of a server process, each request on a connection of its own. On a kept-alive
 * connection, a request written just as the server closes the connection at its keep-alive
 * timeout fails ("fetch failed") and a POST cannot safely be sent again; the client's idle
 * timer, meant to close first, runs late on a busy machine.
 */
export function processClient(port: number, token: string): ApiClient {
  const closing: typeof fetch = (input, init) => {
    const request = new Request(input, init);
    request.headers.set('connection', 'close');
    return fetch(request);
  };
  return createApiClient({ baseUrl: `http://127.0.0.1:${port}/api/v1`, token, fetch: closing });
}

export async function waitForHealth(port: number, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`no healthy answer on port ${port}`);
}

/** The pid of the embedded PostgreSQL on `dataDir`, from its postmaster.pid. */
export function postmasterPid(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/**
 * The JSON log lines at level error (50) or above, and any other line that is not JSON, but
 * for npm's banner (`> name@version start`) and its warnings about the machine's npm config.
 */
export function errorLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('> ') && !line.startsWith('npm warn'))
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return true;
      }
    });
}

/**
 * Writes `text` at `path` whole or not at all (a file beside it, renamed): another process that
 * waits for the file never reads it half written. A plain write creates the file empty first, and
 * on a busy machine a process polling for it can read it in between.
 */
export function writeWhole(path: string, text: string): void {
  writeFileSync(`${path}.part`, text);
  renameSync(`${path}.part`, path);
}

/** The processes' exit codes, each with its output when it is not 0 (what a failing test shows). */
export async function exitsOf(children: Spawned[]): Promise<{ code: number | null; output?: string }[]> {
  const codes = await Promise.all(children.map((child) => child.exited));
  return codes.map((code, i) => (code === 0 ? { code } : { code, output: children[i]!.output() }));
}
