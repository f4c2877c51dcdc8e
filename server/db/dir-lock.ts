/**
 * Taking turns over one data directory between processes: a lock file holding the pid of its
 * owner, taken over when that process is gone.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_WAIT_MS = 180_000;

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** An exited process its parent has not reaped yet (Linux; elsewhere, never). */
function zombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
  } catch {
    return false;
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !zombie(pid);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// One process may open the same directory twice at once (two scripts' helpers); the file lock
// orders processes, this orders the calls inside one.
const inProcess = new Map<string, Promise<unknown>>();

/** Runs `work` holding `<dataDir>/embedded-postgres.lock`; a lock left by a dead process is taken over. */
export async function underLock<T>(dataDir: string, log: (line: string) => void, work: () => Promise<T>): Promise<T> {
  const previous = inProcess.get(dataDir) ?? Promise.resolve();
  const turn = previous.catch(() => {}).then(() => fileLock(dataDir, log, work));
  inProcess.set(dataDir, turn);
  try {
    return await turn;
  } finally {
    if (inProcess.get(dataDir) === turn) inProcess.delete(dataDir);
  }
}

async function fileLock<T>(dataDir: string, log: (line: string) => void, work: () => Promise<T>): Promise<T> {
  const file = join(dataDir, 'embedded-postgres.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = 0;
    let age = 0;
    try {
      holder = Number(readFileSync(file, 'utf8'));
      age = Date.now() - statSync(file).mtimeMs;
    } catch {
      continue; // released in between
    }
    // An empty file is a lock being written; a dead holder's lock is stale.
    if ((holder && !alive(holder)) || (!holder && age > 10_000)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`the embedded PostgreSQL in ${dataDir} stayed locked by process ${holder}`);
    if (!told) log(`waiting for process ${holder}, which is starting or stopping the embedded PostgreSQL`);
    told = true;
    await sleep(100);
  }
  try {
    return await work();
  } finally {
    rmSync(file, { force: true });
  }
}
