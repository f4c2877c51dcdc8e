/**
 * How the delivery worker records what became of its jobs, in small batches: one transaction
 * updates the delivery rows, enqueues the retries and the attempts put back, removes the jobs
 * done (delivery-repo.ts `record`), notes which webhooks are failing (webhook-health.ts),
 * disables those that answered 410, all together, so a crash cannot lose a retry. Then, on its
 * own (it waits on no one's locks and no one waits on its), it puts the webhooks seen slow in
 * the slow lane (delivery-lanes.ts); one that could not be put there is tried again with the
 * next batch (or the worker's next fetch). A batch that cannot be written leaves its jobs active: they expire and run
 * again, and the attempt numbers make that harmless.
 *
 * One batch is written at a time per process, its rows taken in id order: two batches written
 * at once, each locking its job, delivery and webhook rows in its own order, once deadlocked
 * (the isolation bench). Outcomes handed over while a batch is written go in the next one, so
 * a slower database gets larger batches rather than more of them.
 */
import type PgBoss from 'pg-boss';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../kernel/config';
import { enqueueManyIn } from '../jobs/queue';
import { countDeliveryAttempt } from '../observability/metrics';
import { carried, DEFER_SECONDS, deliveryJob, isTestJob, outcomeOf, type DeliveryJob } from './delivery-jobs';
import { deliveryRepo, type AttemptRecord } from './delivery-repo';
import type { AttemptResult } from './sender';
import type { LaneChanges } from './delivery-lanes';
import { disableWebhooks, GONE_REASON, noteAttemptsStatement } from './webhook-health';

export type Job = PgBoss.Job<DeliveryJob>;

/**
 * What a worker did, counted for the benchmark to print (scripts/bench-webhooks.ts): nothing in
 * the worker reads it. By webhook: the jobs fetched, sent, and put back without being sent.
 */
export interface DeliveryStats {
  fetches: number;
  /** Time spent fetching. */
  fetchMs: number;
  fetched: Map<string, number>;
  sent: Map<string, number>;
  parked: Map<string, number>;
  /** Time spent writing outcome batches, and their number. */
  recordMs: number;
  batches: number;
  /** Time spent putting webhooks in the slow lane. */
  markMs: number;
}

export const newDeliveryStats = (): DeliveryStats => ({ fetches: 0, fetchMs: 0, fetched: new Map(), sent: new Map(), parked: new Map(), recordMs: 0, batches: 0, markMs: 0 });
export const count = (counts: Map<string, number> | undefined, key: string | undefined, n = 1) => {
  if (counts && key) counts.set(key, (counts.get(key) ?? 0) + n);
};

export interface Outcome {
  job: Job;
  /** skip: nothing to do; defer: put back for `deferSeconds`; cancel: the webhook is disabled; attempt: sent. */
  kind: 'skip' | 'defer' | 'cancel' | 'attempt';
  result?: AttemptResult;
  webhookId?: string;
  deferSeconds?: number;
  /** The webhook is in the slow lane: what is enqueued again for it goes behind the others. */
  slow?: boolean;
}

const RECORD_BATCH = 100;
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const RECORD_WAIT_MS = 5;

interface RecorderDeps {
  config: Pick<Config, 'webhookRetryDelaySeconds'>;
  db: Knex;
  boss: PgBoss;
  log: Logger;
  clock: () => Date;
  /** The webhooks to put in the slow lane with this batch, and those to take out of it. */
  laneChanges: () => LaneChanges;
  /**
   * Whether the process has seen the webhook slow, asked again as a batch is written: an attempt
   * put back after its webhook was seen slow is enqueued at the slow lane's priority even when it
   * was decided before (the priority is the lane as the job was enqueued, for whoever reads the
   * queue; the fetch goes by the webhook's lane itself: delivery-repo.ts `fetchJobs`).
   */
  isSlow: (webhookId: string) => boolean;
  stats?: DeliveryStats;
}

export interface Recorder {
  /** Settles once the outcome is recorded (or could not be). */
  record(outcome: Outcome): Promise<void>;
  /** Records what is waiting now. */
  flush(): Promise<void>;
  /** Puts the webhooks seen slow in the slow lane now, without waiting for a batch. */
  markSlow(): void;
}

/**
 * How many times a batch is written when PostgreSQL aborts it for a deadlock or a serialization
 * failure. This process writes one batch at a time, every statement takes its rows in id order,
 * and two processes never hold the same job; what is left is a batch holding jobs whose lease
 * lapsed while pg-boss's maintenance expires them (one statement over every lapsed job, in its
 * own order, which is not ours to choose): rare, and nothing of an aborted batch is written.
 */
const CONFLICT_ROUNDS = 3;
const isConflict = (error: unknown) => ['40P01', '40001'].includes((error as { code?: string })?.code ?? '');
/** The most outcomes one batch writes: those handed over while the last batch was written go together. */
const MAX_BATCH = 500;

export function outcomeRecorder({ config, db, boss, log, clock, laneChanges, isSlow, stats }: RecorderDeps): Recorder {
  let batch: { outcome: Outcome; done: () => void }[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  /** Lane changes not yet written, by webhook (the last seen wins). */
  let unmarked = new Map<string, 'slow' | 'fast'>();
  /** The batches being written, one after the other: one at a time per process. */
  let writing: Promise<void> | undefined;

  const schedule = () => {
    if (batch.length >= RECORD_BATCH) void flushing();
    else flushTimer ??= setTimeout(() => void flushing(), RECORD_WAIT_MS);
  };

  /** Writes what is waiting, and what comes meanwhile, one batch at a time; settles when nothing is left. */
  function flushing(): Promise<void> {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    if (!writing && batch.length > 0) {
      writing = (async () => {
        while (batch.length > 0) await writeBatch(batch.splice(0, MAX_BATCH));
      })().finally(() => {
        writing = undefined;
        if (batch.length > 0) schedule();
      });
    }
    return writing ?? Promise.resolve();
  }

  async function flush(): Promise<void> {
    while (batch.length > 0 || writing) await flushing();
    await marking;
  }

  /**
   * Puts the webhooks seen slow in the slow lane and those seen fast out of it (their rows
   * only), beside the batches rather than in their way, one at a time: after each batch, and
   * when the worker asks.
   */
  let marking: Promise<void> | undefined;
  function markSlow(): void {
    const seen = laneChanges();
    for (const lane of ['slow', 'fast'] as const) for (const webhookId of seen[lane]) unmarked.set(webhookId, lane);
    if (marking || unmarked.size === 0) return;
    const writing = unmarked;
    unmarked = new Map();
    const lanes: LaneChanges = { slow: [], fast: [] };
    for (const [webhookId, lane] of writing) lanes[lane].push(webhookId);
    const started = Date.now();
    marking = deliveryRepo(db)
      .setLanes(lanes)
      .then(() => {
        if (stats) stats.markMs += Date.now() - started;
      })
      .catch((error) => {
        // Again with the next batch, unless seen otherwise meanwhile.
        for (const [webhookId, lane] of writing) if (!unmarked.has(webhookId)) unmarked.set(webhookId, lane);
        log.warn({ err: error }, 'could not change webhooks\' lanes; trying again');
      })
      .finally(() => (marking = undefined));
  }

  async function writeBatch(items: { outcome: Outcome; done: () => void }[]): Promise<void> {
    const started = Date.now();
    for (let round = 1; ; round += 1) {
      try {
        await writeOutcomes(items.map((item) => item.outcome));
        if (stats) (stats.recordMs += Date.now() - started), (stats.batches += 1);
        break;
      } catch (error) {
        // PostgreSQL ended the batch's statement to break a deadlock: nothing of it was
        // written, so it is written again.
        if (isConflict(error) && round < CONFLICT_ROUNDS) {
          log.warn({ err: error, round }, 'recording webhook attempts met a deadlock; writing the batch again');
          continue;
        }
        // Not recorded: the jobs stay leased, and are sent again (same delivery id) when the lease lapses.
        log.error({ err: error }, 'could not record webhook attempts');
        break;
      }
    }
    for (const item of items) item.done();
    markSlow();
  }

  async function writeOutcomes(outcomes: Outcome[]): Promise<void> {
    const delay = config.webhookRetryDelaySeconds;
    const stored: AttemptRecord[] = [];
    for (const { job, kind, result } of outcomes) {
      if (isTestJob(job.data)) continue;
      const { deliveryId: id, attempt } = job.data;
      if (kind === 'cancel') stored.push({ id, attempt, status: null, error: 'the webhook is disabled', outcome: 'cancelled', delaySeconds: 0 });
      if (kind !== 'attempt') continue;
      const outcome = outcomeOf(job.data, result!);
      stored.push({ id, attempt, status: result!.status, error: result!.error, outcome, delaySeconds: outcome === 'postponed' ? result!.retryAfterSeconds! : delay });
    }
    // Every row in id order: two writers that lock rows in one order cannot deadlock.
    stored.sort(byId);
    const attempted = outcomes.filter((outcome) => outcome.kind === 'attempt');
    const gone = [...new Set(attempted.filter((outcome) => outcome.result!.status === 410).map((outcome) => outcome.webhookId!))].sort();
    const doneJobs = outcomes.map((outcome) => outcome.job.id).sort();
    const noted = noteAttemptsStatement(clock(), attempted.map((outcome) => ({ webhookId: outcome.webhookId!, ok: outcome.result!.ok })));
    // The usual batch, every attempt answered 2xx: one statement, no transaction.
    if (gone.length === 0 && outcomes.every((outcome) => outcome.kind === 'skip' || (outcome.kind === 'attempt' && outcome.result!.ok))) {
      await deliveryRepo(db).record(stored, doneJobs, noted);
      for (const record of stored) countDeliveryAttempt(record.outcome);
      return;
    }
    await db.transaction(async (trx) => {
      const repo = deliveryRepo(trx);
      const changed = await repo.record(stored, doneJobs, noted);
      const next: PgBoss.JobInsert[] = [];
      for (const { job, kind, result, deferSeconds, slow, webhookId } of outcomes) {
        const laned = slow || (webhookId !== undefined && isSlow(webhookId));
        const data = carried(job, webhookId);
        if (kind === 'defer') next.push(deliveryJob(data, deferSeconds ?? DEFER_SECONDS, laned));
        if (kind !== 'attempt' || !(isTestJob(data) || changed.has(data.deliveryId))) continue;
        const outcome = outcomeOf(data, result!);
        if (outcome === 'postponed') next.push(deliveryJob(data, result!.retryAfterSeconds, laned));
        if (outcome === 'retry') next.push(deliveryJob({ ...data, attempt: data.attempt + 1 }, delay, laned));
      }
      await enqueueManyIn(boss, trx, next);
      await disableWebhooks(trx, boss, gone, GONE_REASON, clock());
    });
    for (const record of stored) countDeliveryAttempt(record.outcome);
    for (const { job, kind, result } of outcomes) {
      if (kind !== 'attempt' || result!.ok) continue;
      const final = outcomeOf(job.data, result!) === 'failed';
      log[final ? 'warn' : 'debug'](
        { delivery: isTestJob(job.data) ? 'test' : job.data.deliveryId, attempt: job.data.attempt, status: result!.status, error: result!.error },
        final ? 'webhook delivery failed; no more attempts' : 'webhook attempt failed; retry scheduled',
      );
    }
  }

  return {
    record: (outcome) =>
      new Promise<void>((done) => {
        batch.push({ outcome, done });
        if (!writing) schedule();
      }),
    flush,
    markSlow,
  };
}
