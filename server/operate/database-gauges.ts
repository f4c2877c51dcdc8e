/**
 * The gauges read from the database at each scrape: what waits or is in flight across every
 * server process and organization. One round trip of statements that each read a partial index
 * or a small table (charges processing, scheduled or pending; instalments due; held messages;
 * webhooks), or the job queue's table of work in hand (pg-boss archives finished jobs after an
 * hour), so a scrape costs about the same whatever the history kept. The undelivered webhook
 * events are read through the delivery queue's waiting jobs: the cost grows with a backlog
 * (about 0.3 s at 100,000 waiting), not with the deliveries log.
 *
 * The pool's gauges are this process's own pool, read without a statement.
 */
import type { Knex } from 'knex';
import { Gauge } from 'prom-client';
import { QUEUES } from '../jobs/queue';
import { registry } from '../observability/metrics';

const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) => new Gauge<L>({ name, help, labelNames, registers: [registry] });

const scrapeUp = gauge('dcs_metrics_database_up', '1 when the database answered this scrape\'s statements, 0 when it did not (the gauges read from it then keep their last values).');
const charges = gauge('dcs_charges', 'Charges now processing (reserved, the gateway not yet answered), scheduled (for a later day) or pending (an ACH debit not settled yet), by processor. Whole service.', ['status', 'processor'] as const);
const reserved = gauge('dcs_charge_reservations_held', 'Charges processing: each holds its amount of its account\'s balance until its answer is recorded. Whole service.', ['processor'] as const);
const reservedCents = gauge('dcs_charge_reservations_held_cents', 'The amount those charges hold, in cents. Whole service.', ['processor'] as const);
const oldestProcessing = gauge('dcs_charge_oldest_processing_age_seconds', 'Age of the oldest charge still processing (since it was reserved or last touched); 0 when none. Recovery asks the gateway after CHARGE_RECOVERY_AFTER_SECONDS.');
const instalmentsDue = gauge('dcs_instalments_due', 'Instalments of payment plans due now and not yet charged (the due work takes them every minute). Whole service.');
const autopayInFlight = gauge('dcs_autopay_runs_in_flight', 'Autopay runs whose charge is still processing. Whole service.');
const held = gauge('dcs_communications_held', 'Messages to debtors held for quiet hours, waiting to be sent. Whole service.');
const endpoints = gauge('dcs_webhook_endpoints', 'Webhook endpoints by status (enabled, disabled). Whole service.', ['status'] as const);
const slowEndpoints = gauge('dcs_webhook_endpoints_slow', 'Webhook endpoints now in the slow lane. Whole service.');
const undelivered = gauge('dcs_webhook_undelivered', 'Webhook deliveries not yet delivered nor failed for good, by lane (normal, slow). Whole service.', ['lane'] as const);
const oldestUndelivered = gauge('dcs_webhook_oldest_undelivered_age_seconds', 'Age of the oldest delivery not yet delivered (since it was queued for its endpoint), by lane; 0 when none.', ['lane'] as const);
const queueJobs = gauge('dcs_job_queue_jobs', 'Jobs in each pg-boss queue by state (created: waiting or deferred, retry, active, completed and failed within the retention). Whole service.', ['queue', 'state'] as const);
const queueDue = gauge('dcs_job_queue_waiting', 'Jobs of each queue due now and not yet taken by a worker. Whole service.', ['queue'] as const);
const queueOldest = gauge('dcs_job_queue_oldest_waiting_age_seconds', 'How long the oldest due job of each queue has waited for a worker (since it became due); 0 when none.', ['queue'] as const);
const poolConnections = gauge('dcs_db_pool_connections', "This process's server pool: connections open by state (used, idle).", ['state'] as const);
const poolWaiting = gauge('dcs_db_pool_waiting', "Statements of this process waiting for a connection of its pool. Above 0 for minutes: the pool is too small for the load (DATABASE_POOL_MAX) or a statement holds connections.");
const poolMax = gauge('dcs_db_pool_max', "The most connections this process's pool opens (DATABASE_POOL_MAX).");

const PROCESSORS_SEEN = new Set<string>(['sandbox']);
const LANES = ['normal', 'slow'] as const;
const JOB_STATES = ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'] as const;

/** One statement per set, sent together (the simple protocol: one round trip, no parameters). */
const STATEMENTS = `
SELECT 'processing' AS status, gateway, count(*)::int AS n, coalesce(sum(amount), 0)::text AS cents,
       coalesce(extract(epoch FROM now() - min(updated_at)), 0)::float8 AS oldest
  FROM charges WHERE status = 'processing' GROUP BY gateway
UNION ALL
SELECT 'scheduled', gateway, count(*)::int, '0', 0 FROM charges WHERE status = 'scheduled' GROUP BY gateway
UNION ALL
SELECT 'pending', gateway, count(*)::int, '0', 0 FROM charges WHERE status = 'pending' GROUP BY gateway;
SELECT (SELECT count(*)::int FROM payment_plan_charges WHERE status = 'pending' AND due_at <= now()) AS instalments_due,
       (SELECT count(*)::int FROM autopay_runs WHERE outcome = 'processing') AS autopay_in_flight,
       (SELECT count(*)::int FROM communications WHERE status = 'held') AS held;
SELECT status, count(*)::int AS n, count(*) FILTER (WHERE slow_until > now())::int AS slow FROM webhooks GROUP BY status;
SELECT CASE WHEN w.slow_until > now() THEN 'slow' ELSE 'normal' END AS lane, count(*)::int AS n,
       coalesce(extract(epoch FROM now() - min(d.created_at)), 0)::float8 AS oldest
  FROM pgboss.job j
  JOIN webhook_deliveries d ON d.id = (j.data->>'deliveryId')::uuid
  JOIN webhooks w ON w.id = d.webhook_id
 WHERE j.name = '${QUEUES.webhookDelivery}' AND j.state < 'completed' AND d.delivered_at IS NULL AND d.failed_at IS NULL
 GROUP BY 1;
SELECT name, state::text AS state, count(*)::int AS n,
       count(*) FILTER (WHERE state < 'active' AND start_after <= now())::int AS due,
       coalesce(extract(epoch FROM now() - min(start_after) FILTER (WHERE state < 'active' AND start_after <= now())), 0)::float8 AS oldest
  FROM pgboss.job GROUP BY name, state;
`;

interface ChargeRow { status: string; gateway: string; n: number; cents: string; oldest: number }
interface CountsRow { instalments_due: number; autopay_in_flight: number; held: number }
interface WebhookRow { status: string; n: number; slow: number }
interface LaneRow { lane: (typeof LANES)[number]; n: number; oldest: number }
interface JobRow { name: string; state: string; n: number; due: number; oldest: number }

function readPool(db: Knex): void {
  const pool = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number } }).pool;
  if (!pool) return;
  poolConnections.set({ state: 'used' }, pool.numUsed());
  poolConnections.set({ state: 'idle' }, pool.numFree());
  poolWaiting.set(pool.numPendingAcquires());
  poolMax.set(pool.max);
}

function setCharges(rows: ChargeRow[]): void {
  for (const row of rows) PROCESSORS_SEEN.add(row.gateway);
  charges.reset();
  reserved.reset();
  reservedCents.reset();
  for (const processor of PROCESSORS_SEEN) {
    for (const status of ['processing', 'scheduled', 'pending']) charges.set({ status, processor }, 0);
    reserved.set({ processor }, 0);
    reservedCents.set({ processor }, 0);
  }
  let oldest = 0;
  for (const row of rows) {
    charges.set({ status: row.status, processor: row.gateway }, row.n);
    if (row.status !== 'processing') continue;
    reserved.set({ processor: row.gateway }, row.n);
    reservedCents.set({ processor: row.gateway }, Number(row.cents));
    oldest = Math.max(oldest, row.oldest);
  }
  oldestProcessing.set(oldest);
}

function setJobs(rows: JobRow[]): void {
  queueJobs.reset();
  const names = new Set<string>([...Object.values(QUEUES), ...rows.map((row) => row.name)]);
  const due = new Map<string, number>();
  const oldest = new Map<string, number>();
  for (const name of names) for (const state of JOB_STATES) queueJobs.set({ queue: name, state }, 0);
  for (const row of rows) {
    queueJobs.set({ queue: row.name, state: row.state }, row.n);
    due.set(row.name, (due.get(row.name) ?? 0) + row.due);
    oldest.set(row.name, Math.max(oldest.get(row.name) ?? 0, row.oldest));
  }
  for (const name of names) {
    queueDue.set({ queue: name }, due.get(name) ?? 0);
    queueOldest.set({ queue: name }, oldest.get(name) ?? 0);
  }
}

async function readDatabase(db: Knex): Promise<void> {
  const results = (await db.raw(STATEMENTS)) as unknown as { rows: unknown[] }[];
  const [chargeRows, counts, webhookRows, laneRows, jobRows] = results.map((result) => result.rows) as [ChargeRow[], CountsRow[], WebhookRow[], LaneRow[], JobRow[]];
  setCharges(chargeRows);
  const [count] = counts;
  instalmentsDue.set(count?.instalments_due ?? 0);
  autopayInFlight.set(count?.autopay_in_flight ?? 0);
  held.set(count?.held ?? 0);
  endpoints.set({ status: 'enabled' }, webhookRows.find((row) => row.status === 'enabled')?.n ?? 0);
  endpoints.set({ status: 'disabled' }, webhookRows.find((row) => row.status === 'disabled')?.n ?? 0);
  slowEndpoints.set(webhookRows.reduce((sum, row) => sum + row.slow, 0));
  for (const lane of LANES) {
    const row = laneRows.find((each) => each.lane === lane);
    undelivered.set({ lane }, row?.n ?? 0);
    oldestUndelivered.set({ lane }, row?.oldest ?? 0);
  }
  setJobs(jobRows);
}

let inFlight: Promise<void> | undefined;

/** Reads the pool and the database into the gauges; scrapes that arrive together share one read. */
export function refreshDatabaseGauges(db: Knex): Promise<void> {
  readPool(db);
  inFlight ??= readDatabase(db)
    .then(
      () => scrapeUp.set(1),
      () => scrapeUp.set(0),
    )
    .finally(() => (inFlight = undefined));
  return inFlight;
}
