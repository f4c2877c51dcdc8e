/**
 * The background workers every server process runs. Each handler must be safe to run twice
 * for one job: pg-boss retries a job whose worker died.
 */
import type { AppDeps } from '../app';
import { startWebhookWorker } from '../webhooks/delivery-worker';

export interface Workers {
  /** Stops taking work and lets what is in hand finish; call before stopping the queue. */
  stop(): Promise<void>;
}

export async function startWorkers(deps: AppDeps): Promise<Workers> {
  const webhooks = startWebhookWorker(deps);
  return { stop: () => webhooks.stop() };
}
