/**
 * The jobs of the webhook-delivery queue. One job is one attempt: a failed attempt that may be
 * retried enqueues the next one (attempt + 1) with `startAfter` set to the retry delay, in the
 * transaction that records the failure. pg-boss's own retryDelay is not used for the spacing:
 * it retries a job that *threw*, while an attempt answered 500 is a job that ran fine, and
 * the delay must come from the configuration at the time of the failure. pg-boss's retries
 * are kept for what they are good at: a worker that died holding a job (the job expires and
 * runs again; the attempt number makes the rerun harmless).
 */
import type PgBoss from 'pg-boss';
import { QUEUES } from '../jobs/queue';

/** The first attempt and 3 retries (spec 6.1). */
export const MAX_ATTEMPTS = 4;

/** An event stored in the outbox, to one webhook: the delivery row holds the rest. */
export interface StoredDeliveryJob {
  deliveryId: string;
  attempt: number;
}

/** A test delivery (POST /webhooks/trigger): nothing is stored, so the job carries the data. */
export interface TestDeliveryJob {
  test: { webhookId: string; event: string; data: unknown };
  attempt: number;
}

export type DeliveryJob = StoredDeliveryJob | TestDeliveryJob;

export const isTestJob = (job: DeliveryJob): job is TestDeliveryJob => 'test' in job;

/**
 * Longer than any attempt can take (WEBHOOK_TIMEOUT_MS is at most 10 minutes), so a job
 * expires only when its worker is gone.
 */
const EXPIRE_SECONDS = 15 * 60;

export function deliveryJob(data: DeliveryJob, startAfterSeconds = 0): PgBoss.JobInsert<DeliveryJob> {
  return {
    name: QUEUES.webhookDelivery,
    data,
    // An interval in seconds, counted by PostgreSQL's clock in the enqueuing transaction.
    ...(startAfterSeconds > 0 ? { startAfter: String(startAfterSeconds) } : {}),
    expireInSeconds: EXPIRE_SECONDS,
    retryLimit: 5,
    retryDelay: 30,
  };
}
