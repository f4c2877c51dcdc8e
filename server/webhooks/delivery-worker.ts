/**
 * The delivery worker: takes attempts off the webhook-delivery queue and POSTs them.
 *
 * It runs its own pump on its own fetch (delivery-repo.ts `fetchJobs`: pg-boss's, webhook by
 * webhook) rather than `boss.work()`: work() hands a batch to a handler and fetches the next
 * batch only when the whole batch is done, so one endpoint that takes the full timeout would
 * hold every other delivery of its batch. Here each attempt frees its slot as soon as it is
 * recorded, and the pump tops the slots up, taking of each webhook only what it may hold.
 * How slots are shared between webhooks, and how a slow webhook is kept out of the others'
 * way, is delivery-lanes.ts; what a job comes to, delivery-attempts.ts; how outcomes are
 * recorded (in batches, one transaction each), delivery-recording.ts.
 *
 * A crash between sending and recording leaves the job active; its lease (delivery-jobs.ts)
 * lapses and another process sends it again: delivery is at least once, and every attempt of
 * one delivery carries the same X-Service-Delivery-ID (and webhook-id) so that a receiver can
 * tell a repeat.
 *
 * The deliveries of one object to one webhook go in order: a job whose predecessor is still
 * unfinished waits for it when it is in hand in this process, and is deferred otherwise (until
 * the predecessor's next attempt). An answer 410 disables the webhook, a 429 or 503 with
 * Retry-After puts the attempt off without spending it, and every recorded batch notes which
 * webhooks are failing (webhook-health.ts).
 */
import type { AppDeps } from '../deps';
import { QUEUES } from '../jobs/queue';
import { attemptOf, attemptSender, prepare, type Attempt } from './delivery-attempts';
import { deliveryQueueOptions, isTestJob, outcomeOf, webhookOfJob } from './delivery-jobs';
import { deliveryLanes } from './delivery-lanes';
import { count, outcomeRecorder, type DeliveryStats, type Job, type Outcome } from './delivery-recording';
import { deliveryRepo, fetchJobs, type DeliveryTarget, type FetchedJob, type Hook } from './delivery-repo';
import type { AttemptResult } from './sender';

/** `clock`: the time of the failing period (webhook-health.ts); the real clock when not given. */
export type WorkerDeps = Pick<AppDeps, 'config' | 'db' | 'logger' | 'secrets' | 'boss'> & Partial<Pick<AppDeps, 'clock'>>;

export interface WebhookWorkerOptions {
  /** Attempts in flight at once in this process. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
  /** How often an idle worker looks for due attempts. */
  pollIntervalMs?: number;
  /** The longest an attempt waits in hand for its predecessor and a slot before it is put back. */
  maxWaitMs?: number;
  /** Counts of what it does, for the benchmark (delivery-recording.ts). */
  stats?: DeliveryStats;
}

export interface WebhookWorker {
  /** Settles once the queue has this worker's lease, before its first fetch. */
  ready: Promise<void>;
  /** Stops fetching, lets the attempts in flight finish and be recorded. */
  stop(): Promise<void>;
}

const FETCH_MAX = 100;

/** The settled state of `settled`, or 'late' when it has not settled by `deadline`. */
function within<T>(settled: Promise<T>, deadline: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((done) => (timer = setTimeout(() => done('late'), Math.max(0, deadline - Date.now()))));
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/** Outcomes handed to the recorder and not yet written, beyond which the pump fetches no more. */
const MAX_RECORDING = 1024;
/** How many deliveries recorded final this process remembers (a predecessor just finished). */
const MAX_FINALS = 20_000;
const FINAL_MS = 10_000;

export function startWebhookWorker(deps: WorkerDeps, options: WebhookWorkerOptions = {}): WebhookWorker {
  const { config, db, logger, secrets, boss } = deps;
  const clock = deps.clock ?? (() => new Date());
  const concurrency = options.concurrency ?? 256;
  const perWebhook = options.perWebhook ?? 64;
  const pollMs = options.pollIntervalMs ?? 500;
  // The longest an attempt waits in hand before sending (for its predecessor, for a slot): a
  // tenth of the lease's margin beyond the timeout, at most 2 s (delivery-lanes.ts).
  const maxWaitMs = options.maxWaitMs ?? Math.min(2000, config.webhookLeaseMarginSeconds * 100);
  const log = logger.child({ worker: QUEUES.webhookDelivery });
  const lanes = deliveryLanes({ concurrency, perWebhook });
  const stats = options.stats;
  const { record, flush, markSlow } = outcomeRecorder({ config, db, boss, log, clock, laneChanges: lanes.takeLaneChanges, isSlow: lanes.seenSlow, stats });
  const send = attemptSender(config, secrets, log);

  let stopping = false;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let idle: (() => void) | undefined;

  const nap = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(() => (wake = undefined, done()), ms);
      wake = () => (clearTimeout(timer), (wake = undefined), done());
    });
  const poke = () => wake?.();

  // --- one attempt ----------------------------------------------------------------------
  // Deliveries in hand in this process (this batch or an earlier one), by id: settles 'final'
  // once recorded as delivered or failed for good (or found finished), 'pending' otherwise.
  const inHand = new Map<string, { settled: Promise<'final' | 'pending'>; settle: (state: 'final' | 'pending') => void }>();
  // And those recorded final in the last FINAL_MS: a job loaded while its predecessor's outcome
  // was being written sees the predecessor unfinished, and goes rather than coming back in a second.
  let finals = new Map<string, number>();
  const settleOf = (deliveryId: string, state: 'final' | 'pending', sent: boolean) => {
    inHand.get(deliveryId)?.settle(state);
    inHand.delete(deliveryId);
    // Only an answer this process recorded (not a job skipped as stale) tells that it is finished.
    if (state !== 'final' || !sent) return;
    if (finals.size >= MAX_FINALS) finals = new Map();
    finals.set(deliveryId, Date.now());
  };

  // A job's slot is freed as soon as its outcome is handed to the recorder: the slots bound
  // the attempts being sent, not the outcomes waiting for their batch to be written (at most
  // MAX_RECORDING of those; the pump fetches no more until they are written).
  let recording = 0;
  /** Jobs released (in flight no more) since the last fetch that found fewer jobs than it asked for. */
  let released = 0;
  const release = (job: Job) => {
    inFlight -= 1;
    released += 1;
    lanes.drop(webhookOfJob(job.data));
  };
  const settleIdle = () => {
    if (inFlight === 0 && recording === 0) idle?.();
  };

  async function run(job: Job, targets: Map<string, DeliveryTarget>, hooks: Map<string, Hook>): Promise<void> {
    let state: 'final' | 'pending' = 'pending';
    let sent = false;
    let freed = false;
    const finish = async (outcome: Outcome) => {
      freed = true;
      if (outcome.kind === 'defer') count(stats?.parked, outcome.webhookId);
      if (outcome.kind === 'attempt') count(stats?.sent, outcome.webhookId);
      release(job);
      recording += 1;
      poke();
      try {
        await record(outcome);
      } finally {
        recording -= 1;
        poke();
      }
    };
    try {
      const prepared = prepare(job, targets, hooks, (deliveryId) => inHand.has(deliveryId) || Date.now() - (finals.get(deliveryId) ?? 0) < FINAL_MS);
      if ('kind' in prepared) {
        if (prepared.kind === 'skip' || prepared.kind === 'cancel') state = 'final';
        return await finish(prepared);
      }
      const webhookId = 'waitFor' in prepared ? prepared.target.webhookId : prepared.webhookId;
      const laned = () => ('waitFor' in prepared ? prepared.target.slow : prepared.slow) || lanes.seenSlow(webhookId);
      // What it waits for before sending (its predecessor, a slot) it waits for within maxWaitMs
      // of now, well inside its lease; beyond that it is put back.
      const deadline = Date.now() + maxWaitMs;
      let attempt: Attempt;
      if ('waitFor' in prepared) {
        // The predecessor is in hand here: go right after it once it is delivered (or failed
        // for good), rather than coming back in a second; still pending (a retry later), or
        // not done within the wait: defer. It waits without a slot: slots are for sending.
        const before = inHand.get(prepared.waitFor);
        if (before && (await within(before.settled, deadline)) !== 'final') return await finish({ job, kind: 'defer', slow: laned(), webhookId });
        attempt = attemptOf(prepared.target);
      } else attempt = prepared;
      const slow = laned();
      if (!(await lanes.take(webhookId, slow, deadline - Date.now()))) return await finish({ job, kind: 'defer', deferSeconds: lanes.parkSeconds(webhookId, slow), slow: laned(), webhookId });
      let result: AttemptResult;
      const sending = Date.now();
      try {
        result = await send(attempt);
      } finally {
        lanes.release(webhookId, slow, Date.now() - sending);
      }
      await finish({ job, kind: 'attempt', result, webhookId, slow: laned() });
      const outcome = isTestJob(job.data) ? 'delivered' : outcomeOf(job.data, result);
      state = outcome === 'delivered' || outcome === 'failed' ? 'final' : 'pending';
      sent = true;
    } finally {
      if (!isTestJob(job.data)) settleOf(job.data.deliveryId, state, sent);
      if (!freed) release(job);
      settleIdle();
      poke();
    }
  }

  async function handle(jobs: Job[]): Promise<void> {
    let targets: Map<string, DeliveryTarget>;
    let hooks: Map<string, Hook>;
    try {
      const repo = deliveryRepo(db);
      targets = await repo.targets(jobs.flatMap((job) => (isTestJob(job.data) ? [] : [job.data.deliveryId])), clock());
      hooks = await repo.hooks(jobs.flatMap((job) => (isTestJob(job.data) ? [job.data.test.webhookId] : [])), clock());
    } catch (error) {
      log.error({ err: error }, 'could not load webhook deliveries');
      for (const job of jobs) release(job);
      settleIdle();
      return;
    }
    if (stats) {
      stats.fetches += 1;
      for (const job of jobs) count(stats.fetched, isTestJob(job.data) ? job.data.test.webhookId : targets.get(job.data.deliveryId)?.webhookId);
    }
    for (const job of jobs) {
      if (isTestJob(job.data) || inHand.has(job.data.deliveryId)) continue;
      let settle!: (state: 'final' | 'pending') => void;
      const settled = new Promise<'final' | 'pending'>((done) => (settle = done));
      inHand.set(job.data.deliveryId, { settled, settle });
    }
    await Promise.all(jobs.map((job) => run(job, targets, hooks)));
  }

  // --- the pump ---------------------------------------------------------------------------
  const refill = Math.max(1, Math.floor(concurrency / 4));
  async function lease(): Promise<void> {
    try {
      // The lease of this process's WEBHOOK_TIMEOUT_MS for the jobs queued from now on, and
      // at once any job whose lease lapsed while no process was running.
      await boss.updateQueue(QUEUES.webhookDelivery, deliveryQueueOptions(config));
      await boss.maintain();
    } catch (error) {
      log.error({ err: error }, 'could not set the webhook delivery lease');
    }
  }
  const ready = lease();

  async function pump(): Promise<void> {
    await ready;
    // After a fetch that found fewer jobs than it asked for (none due, or the webhooks with
    // jobs holding all they may), the next waits for pollMs or until a quarter of the slots
    // are released, rather than fetching a job or two each time one is answered.
    let short: number | undefined;
    while (!stopping) {
      const free = concurrency - inFlight;
      // Fetch in batches: wait until a quarter of the slots are free again (and the recorder
      // has caught up).
      const waiting = short !== undefined && released < refill && Date.now() - short < pollMs;
      if ((free < refill && inFlight > 0) || recording >= MAX_RECORDING || waiting) {
        await nap(waiting ? Math.max(1, pollMs - (Date.now() - short!)) : pollMs);
        continue;
      }
      const batchSize = Math.min(free, FETCH_MAX);
      let jobs: FetchedJob[] = [];
      try {
        const limits = lanes.fetchLimits(batchSize);
        // A webhook found holding all its slots too long is put in the slow lane now: no batch
        // of its answers may come for a while.
        markSlow();
        const started = Date.now();
        jobs = await fetchJobs(boss, limits);
        if (stats) stats.fetchMs += Date.now() - started;
      } catch (error) {
        log.error({ err: error }, 'could not fetch webhook deliveries');
      }
      if (jobs.length < batchSize) (short = Date.now()), (released = 0);
      else short = undefined;
      if (jobs.length === 0) continue;
      inFlight += jobs.length;
      for (const job of jobs) lanes.hold(webhookOfJob(job.data), job.slowLane);
      void handle(jobs);
    }
  }
  const pumping = pump();

  return {
    ready,
    async stop() {
      stopping = true;
      poke();
      await pumping;
      if (inFlight > 0 || recording > 0) await new Promise<void>((done) => (idle = done));
      await flush();
    },
  };
}
