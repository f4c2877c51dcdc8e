/**
 * Real processes for the operating tests: the server as `npm start` or as node itself, its
 * output, its health, and whether a process is still there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { alive } from '../../server/db/dir-lock';

export { alive };

export const root = resolve(__dirname, '../..');

export interface Spawned {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Resolves once the output holds `text`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
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
