/**
 * Background work on pg-boss, in the service's own PostgreSQL (schema `pgboss`): durable,
 * retried, and shared by every server process. A job caused by a change is enqueued in the
 * same transaction as the change (`enqueueIn`), so it exists exactly when the change does.
 */
import type { Knex } from 'knex';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { isStale, keepAnalyzed } from '../db/stale-statistics';
import { traceWorkers, withTraceContext } from '../observability/job-tracing';

export const QUEUES = {
  bulkImport: 'bulk-import',
  email: 'email',
  webhookDelivery: 'webhook-delivery',
  achSettlement: 'ach-settlement',
  outboxRetention: 'outbox-retention',
  dueWork: 'due-work',
  webhookHealth: 'webhook-health',
  webhookRecovery: 'webhook-recovery',
  chargeRecovery: 'charge-recovery',
  validationNotice: 'validation-notice',
  processorLateArrivals: 'processor-late-arrivals',
  processorLaterNotices: 'processor-later-notices',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** pg-boss's table of jobs (partitioned by queue), for the few statements pg-boss has no call for. */
export const JOB_TABLE = 'pgboss.job';
export type Boss = PgBoss;

/**
 * pg-boss fetches the next jobs ORDER BY priority DESC, created_on, id, but its index of
 * waiting jobs is on (name, start_after): every fetch sorted every waiting job, so a backlog
 * of 400,000 webhook attempts made each fetch scan them all (130 deliveries a second instead of
 * 2000). With this index, a fetch reads the first waiting jobs in order and stops. On the
 * partitioned job table it is made on every queue's partition, present and future.
 */
const FETCH_ORDER_INDEX = `CREATE INDEX IF NOT EXISTS dcs_job_fetch_order ON pgboss.job (name, priority DESC, created_on, id) WHERE state < 'active'`;

/**
 * The webhook a webhook-delivery job is for, as the job carries it (`webhookId`, or a test
 * delivery's `test.webhookId`); '' for a job enqueued before jobs carried it, so that such jobs
 * are one more lane of the index below rather than NULLs beside it (read by a second scan
 * that the planner, not knowing they were none, ran over the whole queue: 300 ms a fetch at
 * 400,000 waiting jobs).
 */
export const JOB_WEBHOOK = `COALESCE(data->>'webhookId', data->'test'->>'webhookId', '')`;

/**
 * The delivery worker fetches each webhook's due jobs on their own, up to what it may hold of
 * that webhook (webhooks/delivery-repo.ts `fetchJobs`): with this index, one webhook's backlog
 * is never read to reach another's, and the webhooks with waiting jobs are found one probe each.
 * It is made on the queue's partition. Not CONCURRENTLY: this runs under the start-up lock, and
 * a concurrent build waits for every older transaction of the database, among them a second
 * process's wait for that same lock, held by this process: the two processes starting together
 * (WEB_CONCURRENCY=2) never started. A plain build is instant on a new queue; on a first start
 * over a large queue it holds enqueues for the build's time. The index of the same purpose
 * made over the partitioned table before (NULL for the jobs without a webhook) is dropped.
 */
const WEBHOOK_DUE_INDEX = 'dcs_webhook_job_due';
const FORMER_WEBHOOK_DUE_INDEX = 'pgboss.dcs_job_webhook_due';

/**
 * The error of a name made at the same moment by another process starting: the server starts
 * the queue under the start-up lock, but tools and tests that start one beside it do not.
 */
const isDuplicate = (error: unknown) => ['42P07', '23505'].includes((error as { code?: string })?.code ?? '');

async function indexWebhookJobs(db: PgBoss.Db, partition: string): Promise<void> {
  await db.executeSql(`DROP INDEX IF EXISTS ${FORMER_WEBHOOK_DUE_INDEX}`, []);
  try {
    await db.executeSql(
      `CREATE INDEX IF NOT EXISTS ${WEBHOOK_DUE_INDEX} ON pgboss."${partition.replace(/"/g, '""')}" ((${JOB_WEBHOOK}), start_after) WHERE state < 'active'`,
      [],
    );
  } catch (error) {
    if (!isDuplicate(error)) throw error;
  }
}

/**
 * The planner picks that index only when it knows how many jobs wait: with the statistics of
 * an empty queue, 400,000 jobs enqueued in a minute were still "169 rows", and each fetch went
 * back to sorting them all. Our queues' partitions are therefore analyzed (and vacuumed, which
 * clears finished jobs out of the index) after 2% of their rows change, not PostgreSQL's 10-20%.
 */
const FRESH_STATISTICS =
  'autovacuum_analyze_scale_factor = 0.02, autovacuum_analyze_threshold = 1000, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000';

async function tuneQueueTables(boss: PgBoss): Promise<void> {
  const db = boss.getDb();
  await db.executeSql(FETCH_ORDER_INDEX, []);
  const { rows } = (await db.executeSql('SELECT name, partition_name FROM pgboss.queue WHERE name = ANY($1)', [Object.values(QUEUES)])) as {
    rows: { name: string; partition_name: string }[];
  };
  for (const { name, partition_name: table } of rows) {
    if (name === QUEUES.webhookDelivery) await indexWebhookJobs(db, table);
    // The name is pg-boss's own ('j' and a hex digest); quoted all the same.
    await db.executeSql(`ALTER TABLE pgboss."${table.replace(/"/g, '""')}" SET (${FRESH_STATISTICS})`, []);
  }
}

/** Connections of each process's job queue, beside the server's pool (DATABASE_POOL_MAX). */
export const QUEUE_POOL = 4;

/**
 * Even at 2%, autovacuum comes round once a minute at best, and on a busy server we saw it
 * leave a queue unanalyzed for minutes after 400,000 jobs arrived: every fetch in that time
 * sorted them all. So our queues' partitions are analyzed when stale, by
 * db/stale-statistics.ts's rule, from the first look 10 seconds after the queue starts.
 */
function analyzeWhenStale(boss: PgBoss, logger: Logger): void {
  const db = boss.getDb();
  const analyzeStale = async () => {
    // pg-boss answers nothing once it has stopped (a check that was due as the process stopped).
    const result = (await db.executeSql(
      `SELECT s.relname FROM pg_stat_user_tables s JOIN pgboss.queue q ON q.partition_name = s.relname
        WHERE s.schemaname = 'pgboss' AND q.name = ANY($1) AND ${isStale('s')}`,
      [Object.values(QUEUES)],
    )) as { rows: { relname: string }[] } | undefined;
    for (const { relname } of result?.rows ?? []) await db.executeSql(`ANALYZE pgboss."${relname.replace(/"/g, '""')}"`, []);
  };
  keepAnalyzed(analyzeStale, (error) => logger.warn({ err: error }, 'could not refresh the job queue statistics'), (stop) => boss.once('stopped', stop), { atOnce: false });
}

export async function startQueue(url: string, logger: Logger): Promise<PgBoss> {
  // Maintenance expires the jobs whose lease lapsed (their worker died): every 10 seconds
  // rather than pg-boss's 2 minutes, so a webhook attempt lost in a crash is sent again within
  // about a minute. pg-boss lets one process per interval do it, whatever their number.
  //
  // Retention: a completed job moves to pgboss.archive after an hour (the job table, which
  // every fetch reads, stays the size of the work in hand rather than of all work ever done)
  // and is deleted from the archive after 7 days. What users see of past work (the webhook
  // deliveries log, bulk results) lives in our own tables, not in pg-boss's.
  const boss = new PgBoss({
    connectionString: url,
    schema: 'pgboss',
    max: QUEUE_POOL,
    application_name: 'dcs-jobs',
    maintenanceIntervalSeconds: 10,
    archiveCompletedAfterSeconds: 3600,
    deleteAfterDays: 7,
  });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  // Each handler runs as its job's work: a span (its request's child) and log lines naming it.
  traceWorkers(boss);
  await boss.start();
  for (const name of Object.values(QUEUES)) {
    if (!(await boss.getQueue(name))) await boss.createQueue(name);
  }
  await tuneQueueTables(boss);
  analyzeWhenStale(boss, logger);
  return boss;
}

/** pg-boss's SQL, run on the connection of a knex transaction. */
function transactionDb(trx: Knex.Transaction): PgBoss.Db {
  return {
    executeSql: async (text, values) => {
      const connection = await trx.client.acquireConnection();
      return connection.query(text, values) as Promise<{ rows: unknown[] }>;
    },
  };
}

/**
 * Enqueues a job that commits or rolls back with `trx`. Every job caused by a change is enqueued
 * here or in `enqueueManyIn`: with traces on, its data carries the trace context in hand
 * (`traceparent`), and its worker's span continues that trace (observability/job-tracing.ts).
 */
export async function enqueueIn(
  boss: PgBoss,
  trx: Knex.Transaction,
  name: QueueName,
  data: object,
  options: PgBoss.SendOptions = {},
): Promise<void> {
  await boss.send(name, withTraceContext(data), { ...options, db: transactionDb(trx) });
}

/** Enqueues many jobs in one statement that commits or rolls back with `trx`. */
export async function enqueueManyIn(boss: PgBoss, trx: Knex.Transaction, jobs: PgBoss.JobInsert[]): Promise<void> {
  if (jobs.length === 0) return;
  // The same context for all: read once (none with traces off, and the jobs go as they are).
  const context = withTraceContext({});
  const traced = Object.keys(context).length === 0 ? jobs : jobs.map((job) => ({ ...job, data: { ...(job.data as object | undefined), ...context } }));
  await boss.insert(traced, { db: transactionDb(trx) });
}
