/**
 * Waking this process's worker of a queue when a job was just committed, instead of at its
 * next poll. The workers register here; whoever enqueues asks here, so neither imports the other.
 */
import type { Boss } from './queue';

/** This process's workers, by queue. */
const local = new WeakMap<object, Partial<Record<string, string>>>();

export function registerWorker(boss: Boss, queue: string, workerId: string): void {
  local.set(boss, { ...local.get(boss), [queue]: workerId });
}

/** Wakes this process's worker of `queue`, if it runs one; the others find the job when they poll. */
export function wakeWorker(boss: Boss, queue: string): void {
  const id = local.get(boss)?.[queue];
  if (id) boss.notifyWorker(id);
}
