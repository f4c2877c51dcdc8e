/**
 * The background workers every server process runs. Each handler must be safe to run twice
 * for one job: pg-boss retries a job whose worker died.
 */
import type { AppDeps } from '../app';
import { resumePendingBulkActions, runBulkImport, type BulkJob } from '../bulk/bulk-import';
import { createMailer, type Mail } from '../mail/mailer';
import { startWebhookWorker } from '../webhooks/delivery-worker';
import { settleAch, type SettlementJob } from '../payments/ach-settlement';
import { QUEUES } from './queue';

export interface Workers {
  /** Stops taking work and lets what is in hand finish; call before stopping the queue. */
  stop(): Promise<void>;
}

/** This process's workers, by queue: a job queued here can wake its worker at once. */
const local = new WeakMap<object, Partial<Record<string, string>>>();

/** Wakes this process's worker of `queue`, if it runs one; the others find the job when they poll. */
export function wakeWorker(boss: AppDeps['boss'], queue: string): void {
  const id = local.get(boss)?.[queue];
  if (id) boss.notifyWorker(id);
}

export async function startWorkers(deps: AppDeps): Promise<Workers> {
  const { boss } = deps;
  const ids: Partial<Record<string, string>> = {};
  local.set(boss, ids);
  ids[QUEUES.bulkImport] = await boss.work<BulkJob>(QUEUES.bulkImport, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
    await runBulkImport(deps, job!.data);
  });
  // A process killed mid-import leaves its job "active" until pg-boss expires it; this start
  // takes the work up again at once (rows are claimed one chunk at a time, so two runners at
  // once are safe).
  await resumePendingBulkActions(deps);
  const send = createMailer(deps.config, deps.logger);
  await boss.work<Mail>(QUEUES.email, { pollingIntervalSeconds: 2 }, async ([job]) => {
    await send(job!.data);
  });
  await boss.work<SettlementJob>(QUEUES.achSettlement, { pollingIntervalSeconds: 2 }, async ([job]) => {
    await settleAch(deps, job!.data);
  });
  const webhooks = startWebhookWorker(deps);
  return { stop: () => webhooks.stop() };
}
