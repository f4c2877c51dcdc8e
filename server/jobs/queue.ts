/**
 * Background work on pg-boss, in the service's own PostgreSQL (schema `pgboss`): durable,
 * retried, and shared by every server process. A job caused by a change is enqueued in the
 * same transaction as the change (`enqueueIn`), so it exists exactly when the change does.
 */
import type { Knex } from 'knex';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';

export const QUEUES = {
  bulkImport: 'bulk-import',
  email: 'email',
  webhookDelivery: 'webhook-delivery',
  outboxRetention: 'outbox-retention',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];
export type Boss = PgBoss;

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
    max: 4,
    application_name: 'dcs-jobs',
    maintenanceIntervalSeconds: 10,
    archiveCompletedAfterSeconds: 3600,
    deleteAfterDays: 7,
  });
  boss.on('error', (error) => logger.error({ err: error }, 'job queue error'));
  await boss.start();
  for (const name of Object.values(QUEUES)) {
    if (!(await boss.getQueue(name))) await boss.createQueue(name);
  }
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

/** Enqueues a job that commits or rolls back with `trx`. */
export async function enqueueIn(
  boss: PgBoss,
  trx: Knex.Transaction,
  name: QueueName,
  data: object,
  options: PgBoss.SendOptions = {},
): Promise<void> {
  await boss.send(name, data, { ...options, db: transactionDb(trx) });
}

/** Enqueues many jobs in one statement that commits or rolls back with `trx`. */
export async function enqueueManyIn(boss: PgBoss, trx: Knex.Transaction, jobs: PgBoss.JobInsert[]): Promise<void> {
  if (jobs.length > 0) await boss.insert(jobs, { db: transactionDb(trx) });
}

/** Marks jobs done in the same transaction as the work that finished them. */
export async function completeIn(boss: PgBoss, trx: Knex.Transaction, name: QueueName, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  // pg-boss 10 takes (name, ids, data, options) at run time; its typings omit `data` for id lists.
  const complete = boss.complete.bind(boss) as unknown as (n: string, i: string[], d: null, o: PgBoss.ConnectionOptions) => Promise<unknown>;
  await complete(name, ids, null, { db: transactionDb(trx) });
}
