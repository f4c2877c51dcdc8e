/**
 * The jobs of the webhook-delivery queue. One job is one attempt: a failed attempt that may be
 * retried enqueues the next one (attempt + 1) with `startAfter` set to the retry delay, in the
 * transaction that records the failure. pg-boss's own retryDelay is not used for the spacing:
 * it retries a job that *threw*, while an attempt answered 500 is a job that ran fine, and
 * the delay must come from the configuration at the time of the failure. pg-boss's retries
 * are kept for what they are good at: a worker that died holding a job (the job expires and
 * runs again; the attempt number makes the rerun harmless).
 *
 * How soon "expires" is, is the lease of the queue (`deliveryQueueOptions`): the webhook
 * timeout plus a margin, set on the queue by every worker at start, so the database decides
 * when a job's worker is presumed gone. pg-boss's maintenance (every 10 seconds, see
 * jobs/queue.ts) puts a lapsed job back at once (retry delay 0), and any process fetches it.
 */
import type PgBoss from 'pg-boss';
import type { Config } from '../kernel/config';
import { QUEUES } from '../jobs/queue';
import type { AttemptResult } from './sender';

/**
 * What an attempt's answer means for its delivery: delivered, retry (after the retry delay),
 * failed (for good), postponed (the endpoint asked to wait; the attempt is not spent),
 * cancelled (the webhook is disabled).
 */
export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'postponed' | 'cancelled';

/** The least time an attempt put back waits before it is fetched again. */
export const DEFER_SECONDS = 1;

/** The first attempt and 3 retries (spec 6.1). */
export const MAX_ATTEMPTS = 4;

/** An event stored in the outbox, to one webhook: the delivery row holds the rest. */
export interface StoredDeliveryJob {
  deliveryId: string;
  attempt: number;
  /**
   * The delivery's webhook: the worker fetches each webhook's jobs up to what it may hold of
   * them (delivery-lanes.ts, `fetchJobs`). Jobs enqueued before it was carried have none; their
   * next job has.
   */
  webhookId?: string;
}

/** A test delivery (POST /webhooks/trigger): nothing is stored, so the job carries the data. */
export interface TestDeliveryJob {
  /** `deliveryId`: the X-Service-Delivery-ID of all its attempts (the first attempt's job id). */
  test: { webhookId: string; event: string; data: unknown; deliveryId?: string };
  attempt: number;
}

export type DeliveryJob = StoredDeliveryJob | TestDeliveryJob;

export const isTestJob = (job: DeliveryJob): job is TestDeliveryJob => 'test' in job;

/**
 * How long a fetched attempt belongs to its worker: longer than any attempt of a live worker
 * takes. Beyond the timeout, the margin (WEBHOOK_LEASE_MARGIN_SECONDS, 30 s) is what an attempt
 * may still take: loading the delivery before sending, recording the answer after it, on a busy
 * database. A live worker that overruns it only causes a second send of the same delivery (same
 * X-Service-Delivery-ID), never a lost one.
 */
export const leaseSeconds = (config: Pick<Config, 'webhookTimeoutMs' | 'webhookLeaseMarginSeconds'>) =>
  Math.ceil(config.webhookTimeoutMs / 1000) + config.webhookLeaseMarginSeconds;

/**
 * The queue's settings for every job that does not name its own: the lease, and no delay
 * before an expired job runs again (its attempt never finished; waiting helps nobody).
 */
export function deliveryQueueOptions(config: Pick<Config, 'webhookTimeoutMs' | 'webhookLeaseMarginSeconds'>): PgBoss.Queue {
  return { name: QUEUES.webhookDelivery, expireInSeconds: leaseSeconds(config), retryDelay: 0, retryLimit: 5 };
}

/**
 * The pg-boss priority a slow webhook's attempts are enqueued with (delivery-lanes.ts): it shows
 * the lane in the queue. The worker's fetch goes by the webhook's lane itself, not by this
 * (delivery-repo.ts `fetchJobs`), so attempts enqueued before it entered the lane need no move.
 */
export const SLOW_PRIORITY = -10;

export function deliveryJob(data: DeliveryJob, startAfterSeconds = 0, slow = false): PgBoss.JobInsert<DeliveryJob> {
  return {
    name: QUEUES.webhookDelivery,
    data,
    ...(slow ? { priority: SLOW_PRIORITY } : {}),
    // An interval in seconds, counted by PostgreSQL's clock in the enqueuing transaction.
    ...(startAfterSeconds > 0 ? { startAfter: String(startAfterSeconds) } : {}),
    // No expireInSeconds, retryLimit or retryDelay: the queue's (deliveryQueueOptions) apply.
  };
}

/** What an attempt's answer means for its delivery. */
export function outcomeOf(data: DeliveryJob, result: AttemptResult): AttemptOutcome {
  if (result.ok) return 'delivered';
  if (result.status === 410) return 'failed';
  if (result.retryAfterSeconds !== undefined) return 'postponed';
  return data.attempt >= MAX_ATTEMPTS ? 'failed' : 'retry';
}

/** The webhook a job names (a stored delivery's job enqueued before jobs named it: none). */
export const webhookOfJob = (data: DeliveryJob): string | undefined => (isTestJob(data) ? data.test.webhookId : data.webhookId);

/**
 * The job's data as its next job carries it: a test delivery keeps the id of its first attempt;
 * a stored delivery's names its webhook (`webhookId`: the one its attempt went to).
 */
export function carried(job: PgBoss.Job<DeliveryJob>, webhookId?: string): DeliveryJob {
  const data = job.data;
  if (isTestJob(data)) return data.test.deliveryId ? data : { ...data, test: { ...data.test, deliveryId: job.id } };
  return data.webhookId || !webhookId ? data : { ...data, webhookId };
}
