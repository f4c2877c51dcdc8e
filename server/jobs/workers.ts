/**
 * The background workers every server process runs. Each handler must be safe to run twice
 * for one job: pg-boss retries a job whose worker died.
 */
import type { AppDeps } from '../app';

export async function startWorkers(_deps: AppDeps): Promise<void> {
  // Handlers register here as the resources that need them arrive (bulk import, e-mail, webhooks).
}
