/**
 * The delivery worker: takes attempts off the webhook-delivery queue and POSTs them.
 *
 * It runs its own pump on pg-boss's fetch/complete rather than `boss.work()`: work() hands a
 * batch to a handler and fetches the next batch only when the whole batch is done, so one
 * endpoint that takes the full timeout would hold every other delivery of its batch. Here
 * each attempt frees its slot as soon as it is recorded, and the pump tops the slots up.
 * A webhook may hold at most `perWebhook` of the slots: an attempt beyond that is put back
 * on the queue for a second later (same attempt number), so a slow endpoint slows only
 * itself. Results are recorded in small batches: one transaction updates the delivery rows,
 * enqueues the retries and completes the jobs together, so a crash cannot lose a retry.
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
import type PgBoss from 'pg-boss';
import type { AppDeps } from '../deps';
import { completeIn, enqueueManyIn, QUEUES } from '../jobs/queue';
import { deliveryRepo, type AttemptOutcome, type AttemptRecord, type DeliveryTarget, type Hook } from './delivery-repo';
import { carried, deliveryJob, deliveryQueueOptions, isTestJob, outcomeOf, type DeliveryJob } from './delivery-jobs';
import { postWebhook, type AttemptResult } from './sender';
import { signedRequest } from './signing';
import { disableWebhooks, GONE_REASON, noteAttempts } from './webhook-health';

/** `clock`: the time of the failing period (webhook-health.ts); the real clock when not given. */
export type WorkerDeps = Pick<AppDeps, 'config' | 'db' | 'logger' | 'secrets' | 'boss'> & Partial<Pick<AppDeps, 'clock'>>;

export interface WebhookWorkerOptions {
  /** Attempts in flight at once in this process. */
  concurrency?: number;
  /** Attempts in flight at once to one webhook. */
  perWebhook?: number;
  /** How often an idle worker looks for due attempts. */
  pollIntervalMs?: number;
}

export interface WebhookWorker {
  /** Settles once the queue has this worker's lease, before its first fetch. */
  ready: Promise<void>;
  /** Stops fetching, lets the attempts in flight finish and be recorded. */
  stop(): Promise<void>;
}

type Job = PgBoss.Job<DeliveryJob>;

interface Outcome {
  job: Job;
  /** skip: nothing to do; defer: put back for `deferSeconds`; cancel: the webhook is disabled; attempt: sent. */
  kind: 'skip' | 'defer' | 'cancel' | 'attempt';
  result?: AttemptResult;
  webhookId?: string;
  deferSeconds?: number;
}

interface Attempt {
  deliveryId: string;
  webhookId: string;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  event: string;
  data: unknown;
}

const DEFER_SECONDS = 1;
const FETCH_MAX = 100;
const RECORD_BATCH = 100;
const RECORD_WAIT_MS = 5;

export function startWebhookWorker(deps: WorkerDeps, options: WebhookWorkerOptions = {}): WebhookWorker {
  const { config, db, logger, secrets, boss } = deps;
  const clock = deps.clock ?? (() => new Date());
  const concurrency = options.concurrency ?? 256;
  const perWebhook = options.perWebhook ?? 64;
  const pollMs = options.pollIntervalMs ?? 500;
  const log = logger.child({ worker: QUEUES.webhookDelivery });

  let stopping = false;
  let inFlight = 0;
  const perHook = new Map<string, number>();
  // A saturated webhook's jobs are put back spread over the time its slots take to free: the
  // n-th job parked waits about n × (its attempts' mean time) / perWebhook. A slow endpoint's
  // backlog then comes back about once, instead of every second, and costs the others nothing.
  const pace = new Map<string, { meanMs: number; parked: number }>();
  const paceOf = (webhookId: string) => {
    let state = pace.get(webhookId);
    if (!state) pace.set(webhookId, (state = { meanMs: 0, parked: 0 }));
    if (pace.size > 10_000) pace.clear();
    return state;
  };
  const parkSeconds = (webhookId: string) => {
    const state = paceOf(webhookId);
    state.parked += 1;
    return Math.min(3600, Math.max(DEFER_SECONDS, Math.ceil((state.parked * state.meanMs) / perWebhook / 1000)));
  };
  const timed = (webhookId: string, ms: number) => {
    const state = paceOf(webhookId);
    state.meanMs = state.meanMs === 0 ? ms : state.meanMs * 0.9 + ms * 0.1;
    state.parked = Math.max(0, state.parked - 1);
  };
  let wake: (() => void) | undefined;
  let idle: (() => void) | undefined;

  const nap = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(() => (wake = undefined, done()), ms);
      wake = () => (clearTimeout(timer), (wake = undefined), done());
    });
  const poke = () => wake?.();

  // Secrets are opened once per webhook and kept while the sealed value is unchanged.
  const opened = new Map<string, { sealed: string; secret: string }>();
  const secretOf = (webhookId: string, sealed: string): string => {
    const cached = opened.get(webhookId);
    if (cached?.sealed === sealed) return cached.secret;
    if (opened.size > 10_000) opened.clear();
    const secret = secrets.decrypt(sealed);
    opened.set(webhookId, { sealed, secret });
    return secret;
  };

  // --- recording, in batches ---------------------------------------------------------------
  let batch: { outcome: Outcome; done: () => void }[] = [];
  let flushTimer: NodeJS.Timeout | undefined;

  const flush = async () => {
    clearTimeout(flushTimer);
    flushTimer = undefined;
    const items = batch;
    batch = [];
    if (items.length === 0) return;
    try {
      await writeOutcomes(items.map((item) => item.outcome));
    } catch (error) {
      // The jobs stay active, expire and run again; the attempt numbers keep that harmless.
      log.error({ err: error }, 'could not record webhook attempts');
    }
    for (const item of items) item.done();
  };

  const record = (outcome: Outcome) =>
    new Promise<void>((done) => {
      batch.push({ outcome, done });
      if (batch.length >= RECORD_BATCH) void flush();
      else flushTimer ??= setTimeout(() => void flush(), RECORD_WAIT_MS);
    });

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
    const attempted = outcomes.filter((outcome) => outcome.kind === 'attempt');
    const gone = [...new Set(attempted.filter((outcome) => outcome.result!.status === 410).map((outcome) => outcome.webhookId!))];
    await db.transaction(async (trx) => {
      const changed = await deliveryRepo(trx).record(stored);
      const next: PgBoss.JobInsert[] = [];
      for (const { job, kind, result, deferSeconds } of outcomes) {
        const data = carried(job);
        if (kind === 'defer') next.push(deliveryJob(data, deferSeconds ?? DEFER_SECONDS));
        if (kind !== 'attempt' || !(isTestJob(data) || changed.has(data.deliveryId))) continue;
        const outcome = outcomeOf(data, result!);
        if (outcome === 'postponed') next.push(deliveryJob(data, result!.retryAfterSeconds));
        if (outcome === 'retry') next.push(deliveryJob({ ...data, attempt: data.attempt + 1 }, delay));
      }
      await enqueueManyIn(boss, trx, next);
      await completeIn(boss, trx, QUEUES.webhookDelivery, outcomes.map((outcome) => outcome.job.id));
      await noteAttempts(trx, clock(), attempted.map((outcome) => ({ webhookId: outcome.webhookId!, ok: outcome.result!.ok })));
      await disableWebhooks(trx, boss, gone, GONE_REASON, clock());
    });
    for (const { job, kind, result } of outcomes) {
      if (kind !== 'attempt' || result!.ok) continue;
      const final = outcomeOf(job.data, result!) === 'failed';
      log[final ? 'warn' : 'debug'](
        { delivery: isTestJob(job.data) ? 'test' : job.data.deliveryId, attempt: job.data.attempt, status: result!.status, error: result!.error },
        final ? 'webhook delivery failed; no more attempts' : 'webhook attempt failed; retry scheduled',
      );
    }
  }

  // --- one attempt ----------------------------------------------------------------------
  // Deliveries in hand in this process (this batch or an earlier one), by id: settles 'final'
  // once recorded as delivered or failed for good (or found finished), 'pending' otherwise.
  const inHand = new Map<string, { settled: Promise<'final' | 'pending'>; settle: (state: 'final' | 'pending') => void }>();
  const settleOf = (deliveryId: string, state: 'final' | 'pending') => {
    inHand.get(deliveryId)?.settle(state);
    inHand.delete(deliveryId);
  };

  /**
   * What to send for a job, or what else to do with it: skip it (webhook deleted, delivery done
   * already), cancel it (webhook disabled), or defer it (an earlier delivery of the same object
   * to the same webhook is still under way: deliveries of one object keep their order). A job
   * whose predecessor is in hand here waits for it instead (see run).
   */
  function prepare(job: Job, targets: Map<string, DeliveryTarget>, hooks: Map<string, Hook>): Attempt | Outcome | { waitFor: string; target: DeliveryTarget } {
    const data = job.data;
    const skip: Outcome = { job, kind: 'skip' };
    if (isTestJob(data)) {
      const hook = hooks.get(data.test.webhookId);
      if (!hook) return skip;
      return { deliveryId: data.test.deliveryId ?? job.id, webhookId: hook.id, url: hook.url, secretSealed: hook.secret_sealed, previousSecretSealed: hook.previous_secret_sealed, event: data.test.event, data: data.test.data };
    }
    const target = targets.get(data.deliveryId);
    // A finished delivery, or an attempt already made (the job ran before, then its worker died).
    if (!target || target.finished || target.attempts !== data.attempt - 1) return skip;
    if (target.disabled) return { job, kind: 'cancel' };
    if (target.blockerId && inHand.has(target.blockerId)) return { waitFor: target.blockerId, target };
    if (target.blockedUntil) {
      const wait = Math.ceil((new Date(target.blockedUntil).getTime() - Date.now()) / 1000);
      return { job, kind: 'defer', deferSeconds: Math.min(3600, Math.max(DEFER_SECONDS, wait)) };
    }
    return attemptOf(target);
  }

  async function send(attempt: Attempt): Promise<AttemptResult> {
    let secret: string;
    let previous: string | undefined;
    try {
      secret = secretOf(attempt.webhookId, attempt.secretSealed);
      previous = attempt.previousSecretSealed ? secretOf(`${attempt.webhookId}:previous`, attempt.previousSecretSealed) : undefined;
    } catch (error) {
      log.error({ err: error, webhook: attempt.webhookId }, 'cannot open a webhook secret (DATA_ENCRYPTION_KEY changed?)');
      return { ok: false, status: null, error: 'the webhook secret could not be opened' };
    }
    const { headers, body } = signedRequest(attempt, previous ? [secret, previous] : [secret]);
    return postWebhook(attempt.url, headers, body, { timeoutMs: config.webhookTimeoutMs, allowInsecure: config.webhookAllowInsecureUrls });
  }

  const attemptOf = (target: DeliveryTarget): Attempt => ({
    deliveryId: target.deliveryId,
    webhookId: target.webhookId,
    url: target.url,
    secretSealed: target.secretSealed,
    previousSecretSealed: target.previousSecretSealed,
    event: target.event,
    data: target.payload,
  });

  async function run(job: Job, targets: Map<string, DeliveryTarget>, hooks: Map<string, Hook>): Promise<void> {
    let state: 'final' | 'pending' = 'pending';
    try {
      let attempt = prepare(job, targets, hooks);
      // The predecessor is in hand here: go right after it once it is delivered (or failed for
      // good), rather than coming back in a second; still pending (a retry later): defer.
      if ('waitFor' in attempt) {
        if ((await inHand.get(attempt.waitFor)!.settled) === 'pending') return await record({ job, kind: 'defer' });
        attempt = attemptOf(attempt.target);
      }
      if ('kind' in attempt) {
        if (attempt.kind === 'skip' || attempt.kind === 'cancel') state = 'final';
        return await record(attempt);
      }
      const busy = perHook.get(attempt.webhookId) ?? 0;
      if (busy >= perWebhook) return await record({ job, kind: 'defer', deferSeconds: parkSeconds(attempt.webhookId) });
      perHook.set(attempt.webhookId, busy + 1);
      let result: AttemptResult;
      try {
        const sending = Date.now();
        result = await send(attempt);
        timed(attempt.webhookId, Date.now() - sending);
      } finally {
        const left = (perHook.get(attempt.webhookId) ?? 1) - 1;
        if (left > 0) perHook.set(attempt.webhookId, left);
        else perHook.delete(attempt.webhookId);
      }
      await record({ job, kind: 'attempt', result, webhookId: attempt.webhookId });
      const outcome = isTestJob(job.data) ? 'delivered' : outcomeOf(job.data, result);
      state = outcome === 'delivered' || outcome === 'failed' ? 'final' : 'pending';
    } finally {
      if (!isTestJob(job.data)) settleOf(job.data.deliveryId, state);
      inFlight -= 1;
      if (inFlight === 0) idle?.();
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
      inFlight -= jobs.length;
      if (inFlight === 0) idle?.();
      return;
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
    while (!stopping) {
      const free = concurrency - inFlight;
      // Fetch in batches: wait until a quarter of the slots are free again.
      if (free < refill && inFlight > 0) {
        await nap(pollMs);
        continue;
      }
      let jobs: Job[] = [];
      try {
        jobs = await boss.fetch<DeliveryJob>(QUEUES.webhookDelivery, { batchSize: Math.min(free, FETCH_MAX) });
      } catch (error) {
        log.error({ err: error }, 'could not fetch webhook deliveries');
      }
      if (jobs.length === 0) {
        await nap(pollMs);
        continue;
      }
      inFlight += jobs.length;
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
      if (inFlight > 0) await new Promise<void>((done) => (idle = done));
      await flush();
    },
  };
}
