/**
 * Retention of the event log and outbox: an event and its deliveries are removed
 * EVENT_RETENTION_DAYS (or WEBHOOK_LOG_RETENTION_DAYS, whichever is longer) after the event,
 * once every delivery of it has finished (delivered, or failed for good); a delivery still
 * being retried keeps its event. Finished recovery tasks go after the same time. It runs as a pg-boss schedule (hourly, in
 * whichever process takes the job), so a stopped server only delays it. Deletes go in chunks,
 * each its own short transaction, so a large backlog never holds long locks.
 *
 * pg-boss's own jobs have their retention in jobs/queue.ts.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import { QUEUES } from '../jobs/queue';

const CHUNK = 5000;
/** Minute 17 of every hour: away from the top of the hour, when other schedules run. */
export const RETENTION_CRON = '17 * * * *';

/** Removes the events (their deliveries cascade) past retention; answers how many events went. */
export async function pruneOutbox(db: Knex, retentionDays: number): Promise<number> {
  let removed = 0;
  for (;;) {
    const { rowCount } = await db.raw<{ rowCount: number }>(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT e.id FROM webhook_events e
          WHERE e.created_at < now() - make_interval(days => ?)
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.delivered_at IS NULL AND d.failed_at IS NULL)
          ORDER BY e.created_at LIMIT ${CHUNK})`,
      [retentionDays],
    );
    removed += rowCount;
    if (rowCount < CHUNK) return removed;
  }
}

/** How long events (and with them their deliveries) are kept. */
export const retentionDays = (config: Pick<AppDeps['config'], 'eventRetentionDays' | 'webhookLogRetentionDays'>) =>
  Math.max(config.eventRetentionDays, config.webhookLogRetentionDays);

/** The schedule and its worker; every process registers both (pg-boss keeps one schedule). */
export async function startOutboxRetention(deps: Pick<AppDeps, 'boss' | 'db' | 'config' | 'logger'>): Promise<void> {
  const { boss, db, config, logger } = deps;
  await boss.schedule(QUEUES.outboxRetention, RETENTION_CRON);
  await boss.work(QUEUES.outboxRetention, { pollingIntervalSeconds: 30 }, async () => {
    const days = retentionDays(config);
    const removed = await pruneOutbox(db, days);
    await db.raw(`DELETE FROM webhook_recoveries WHERE completed_at < now() - make_interval(days => ?)`, [days]);
    if (removed > 0) logger.info({ removed, retentionDays: days }, 'outbox: removed events past retention');
  });
}
