/**
 * SQL of the delivery worker. The worker serves every tenant: its jobs carry delivery and
 * webhook ids that were written by tenant-scoped code, so these queries go by id alone.
 */
import type { Knex } from 'knex';
import type PgBoss from 'pg-boss';
import { eventBodyText } from '../event-body';
import { JOB_TABLE, QUEUES } from '../jobs/queue';
import { SLOW_PRIORITY, type AttemptOutcome, type DeliveryJob } from './delivery-jobs';
import { DELIVERIES, WEBHOOK_EVENTS, WEBHOOKS, type EventName } from './webhook-repo';

/** How long a webhook seen answering slowly stays in the slow lane (delivery-lanes.ts). */
export const SLOW_LANE_MINUTES = 10;

export interface DeliveryTarget {
  deliveryId: string;
  attempts: number;
  finished: boolean;
  event: EventName;
  /** The payload's JSON text (the log stores it compressed: event-body.ts). */
  dataJson: string;
  webhookId: string;
  url: string;
  secretSealed: string;
  /** The secret before the last rotation, while it still signs beside the new one. */
  previousSecretSealed: string | null;
  disabled: boolean;
  /** The webhook is in the slow lane (delivery-lanes.ts). */
  slow: boolean;
  /**
   * The delivery of the same object to the same webhook just before this one, when it is
   * still under way (this one waits for it), and when its next attempt is due; null when none.
   */
  blockerId: string | null;
  blockedUntil: Date | null;
}

export interface Hook {
  id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
}

export type { AttemptOutcome };

export interface AttemptRecord {
  id: string;
  attempt: number;
  status: number | null;
  error: string | null;
  /**
   * delivered, retry (after the retry delay), failed (for good), postponed (the endpoint asked
   * to wait `delaySeconds`; the attempt is not spent), cancelled (the webhook is disabled).
   */
  outcome: AttemptOutcome;
  delaySeconds: number;
}

/** The previous secret, only while its rotation's grace lasts (by the worker's clock). */
const PREVIOUS_SECRET = `CASE WHEN ${WEBHOOKS}.previous_secret_expires_at > ?::timestamptz THEN ${WEBHOOKS}.previous_secret_sealed END`;

/** The webhook a job is for, as the job carries it (a job enqueued before it carried one has none). */
const JOB_WEBHOOK = `COALESCE(data->>'webhookId', data->'test'->>'webhookId')`;

/**
 * How many of the queue's next due jobs one fetch looks at, as a multiple of what it takes: a
 * fetch skips the held webhooks' jobs (delivery-lanes.ts), and skipping is reading, so it reads
 * a bounded window of the queue's head rather than, behind a held webhook's backlog of
 * thousands, every one of them.
 */
const FETCH_WINDOW = 4;

/**
 * The next due attempts of the webhook-delivery queue, as pg-boss's fetch takes them (the same
 * order, the same lock, the same columns, the queue being of the standard policy), but none of
 * the webhooks `held` (delivery-lanes.ts), nor a job of a webhook known `slow` (in the slow lane)
 * still at the usual priority (one enqueued before the webhook entered the lane): those stay in
 * the queue, and those of them met in the window are moved behind everyone else's (the slow
 * lane's priority), in the same statement, so that the queue's head is the others' again. Without that, the head filled with the held
 * webhook's backlog as the others' jobs were taken (a window of nothing but held jobs, and the
 * fast endpoint waited); with one pass over the whole backlog instead (the way a webhook entered
 * the slow lane before), a webhook with 30,000 waiting took 1.3 to 1.7 s of the database at once.
 * Here each job is moved once, when it reaches the head, in a statement that runs anyway.
 *
 * Run on pg-boss's own connections. Answers the jobs taken and how many were moved.
 */
export async function fetchJobs(
  boss: PgBoss,
  { batchSize, held, slow }: { batchSize: number; held: string[]; slow: string[] },
): Promise<{ jobs: PgBoss.Job<DeliveryJob>[]; moved: number }> {
  const due = `name = $1 AND state < 'active' AND start_after < now()`;
  const take = `UPDATE ${JOB_TABLE} AS j
        SET state = 'active', started_on = now(),
            retry_count = CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END
       FROM next
      WHERE j.name = $1 AND j.id = next.id
     RETURNING j.id, j.name, j.data, EXTRACT(epoch FROM j.expire_in) AS "expireInSeconds"`;
  if (held.length === 0 && slow.length === 0) {
    // pg-boss's own statement.
    const { rows } = (await boss.getDb().executeSql(
      `WITH next AS (SELECT id FROM ${JOB_TABLE} WHERE ${due} ORDER BY priority DESC, created_on, id LIMIT $2 FOR UPDATE SKIP LOCKED) ${take}`,
      [QUEUES.webhookDelivery, batchSize],
    )) as { rows: PgBoss.Job<DeliveryJob>[] };
    return { jobs: rows, moved: 0 };
  }
  // The window unlocked; each job locked (and checked again) as it is taken or moved, skipping
  // those another process holds: a fetch never waits on a lock. The jobs are looked up by key
  // (= ANY of an array), never joined to the window: a join let the planner read the whole queue.
  const { rows } = (await boss.getDb().executeSql(
    `WITH win AS MATERIALIZED (
       SELECT id, COALESCE(${JOB_WEBHOOK} = ANY ($3::text[]), false) AS held,
              COALESCE(${JOB_WEBHOOK} = ANY ($4::text[]), false) AND priority > ${SLOW_PRIORITY} AS behind
         FROM ${JOB_TABLE}
        WHERE ${due} ORDER BY priority DESC, created_on, id LIMIT $2 * ${FETCH_WINDOW}),
     next AS (
       SELECT id FROM ${JOB_TABLE}
        WHERE name = $1 AND id = ANY (ARRAY(SELECT id FROM win WHERE NOT held AND NOT behind)) AND state < 'active'
        ORDER BY priority DESC, created_on, id LIMIT $2
          FOR UPDATE SKIP LOCKED),
     moving AS (
       SELECT id FROM ${JOB_TABLE}
        WHERE name = $1 AND id = ANY (ARRAY(SELECT id FROM win WHERE held OR behind)) AND state < 'active' AND priority > ${SLOW_PRIORITY}
        ORDER BY id
          FOR UPDATE SKIP LOCKED),
     moved AS (
       UPDATE ${JOB_TABLE} AS m SET priority = ${SLOW_PRIORITY} FROM moving WHERE m.name = $1 AND m.id = moving.id RETURNING 1),
     taken AS (${take})
     SELECT id, name, data, "expireInSeconds", NULL::bigint AS moved FROM taken
     UNION ALL SELECT NULL, NULL, NULL, NULL, count(*) FROM moved`,
    [QUEUES.webhookDelivery, batchSize, held, slow],
  )) as { rows: (PgBoss.Job<DeliveryJob> & { moved: string | null })[] };
  const moved = rows.find((row) => row.moved !== null);
  return { jobs: rows.filter((row) => row.moved === null).map(({ moved: _, ...job }) => job), moved: Number(moved?.moved ?? 0) };
}

export function deliveryRepo(db: Knex) {
  return {
    async targets(deliveryIds: string[], now: Date): Promise<Map<string, DeliveryTarget>> {
      if (deliveryIds.length === 0) return new Map();
      const rows = await db(DELIVERIES)
        .join(WEBHOOKS, `${WEBHOOKS}.id`, `${DELIVERIES}.webhook_id`)
        .join(WEBHOOK_EVENTS, `${WEBHOOK_EVENTS}.id`, `${DELIVERIES}.event_id`)
        .whereIn(`${DELIVERIES}.id`, deliveryIds)
        .select(
          `${DELIVERIES}.id as deliveryId`,
          `${DELIVERIES}.attempts`,
          db.raw(`(${DELIVERIES}.delivered_at IS NOT NULL OR ${DELIVERIES}.failed_at IS NOT NULL) AS finished`),
          `${WEBHOOK_EVENTS}.name as event`,
          `${WEBHOOK_EVENTS}.body`,
          `${WEBHOOKS}.id as webhookId`,
          `${WEBHOOKS}.url`,
          `${WEBHOOKS}.secret_sealed as secretSealed`,
          db.raw(`${PREVIOUS_SECRET} AS "previousSecretSealed"`, [now.toISOString()]),
          db.raw(`${WEBHOOKS}.status = 'disabled' AS disabled`),
          db.raw(`COALESCE(${WEBHOOKS}.slow_until > now(), false) AS slow`),
          // The delivery just before this one, of its object, to its webhook, when it is unfinished
          // (one index probe). Only the one just before: it went only once the one before it had
          // finished, and so on, so when it has finished every earlier one has.
          db.raw(
            `(SELECT CASE WHEN p.delivered_at IS NULL AND p.failed_at IS NULL THEN ARRAY[p.id::text, COALESCE(p.next_attempt_at, now())::text] END
                FROM ${DELIVERIES} p
               WHERE p.webhook_id = ${DELIVERIES}.webhook_id AND p.object_id = ${DELIVERIES}.object_id AND p.sequence < ${DELIVERIES}.sequence
               ORDER BY p.sequence DESC LIMIT 1) AS blocker`,
          ),
        );
      return new Map(
        (rows as (Omit<DeliveryTarget, 'blockerId' | 'blockedUntil' | 'dataJson'> & { body: Buffer; blocker: [string, string] | null })[]).map(({ blocker, body, ...row }) => [
          row.deliveryId,
          { ...row, dataJson: eventBodyText(body), blockerId: blocker?.[0] ?? null, blockedUntil: blocker ? new Date(blocker[1]) : null },
        ]),
      );
    },

    async hooks(ids: string[], now: Date): Promise<Map<string, Hook>> {
      if (ids.length === 0) return new Map();
      const rows: Hook[] = await db(WEBHOOKS)
        .whereIn('id', ids)
        .select('id', 'url', 'secret_sealed', db.raw(`${PREVIOUS_SECRET} AS previous_secret_sealed`, [now.toISOString()]));
      return new Map(rows.map((row) => [row.id, row]));
    },

    /**
     * Puts webhooks seen answering slowly in the slow lane until SLOW_LANE_MINUTES from now
     * (renewed when less than half of it is left, so a slow webhook's row is written once in
     * minutes, not once per batch): what is enqueued for it from then on goes behind everyone
     * else's. Its attempts already waiting are moved there as they reach the queue's head
     * (`fetchJobs`), not here in one pass.
     */
    async markSlow(webhookIds: string[]): Promise<void> {
      if (webhookIds.length === 0) return;
      await db.raw(
        `UPDATE ${WEBHOOKS} SET slow_until = now() + make_interval(mins => ${SLOW_LANE_MINUTES})
          WHERE id = ANY (?::uuid[]) AND (slow_until IS NULL OR slow_until < now() + make_interval(mins => ${SLOW_LANE_MINUTES / 2}))`,
        [[...webhookIds].sort()],
      );
    },

    /**
     * Records attempts, and with them (one statement, one round trip) removes the jobs done
     * from the queue and runs `also` (the webhooks' failing periods: webhook-health.ts). A
     * delivery row is changed only when the attempt is the next one of a delivery not yet
     * finished, so a job run twice (its worker died after sending) counts once. Answers the
     * ids of the rows changed.
     *
     * A job done is deleted rather than marked completed: the delivery row is its record (the
     * deliveries log reads it), and a completed job would only be rewritten, archived an hour
     * later and deleted a week after that, three more writes of each attempt.
     */
    async record(attempts: AttemptRecord[], doneJobIds: string[], also?: { sql: string; bindings: string[] }): Promise<Set<string>> {
      if (attempts.length === 0 && doneJobIds.length === 0 && !also) return new Set();
      const { rows } = await db.raw<{ rows: { id: string }[] }>(
        `WITH done AS (DELETE FROM ${JOB_TABLE} WHERE name = ? AND id = ANY (?::uuid[]))${also ? `, also AS (${also.sql})` : ''},
         recorded AS (
         UPDATE ${DELIVERIES} AS d
            SET attempts = CASE WHEN v.outcome IN ('postponed', 'cancelled') THEN d.attempts ELSE v.attempt END,
                last_status_code = v.status,
                last_error = v.error,
                delivered_at = CASE WHEN v.outcome = 'delivered' THEN now() END,
                failed_at = CASE WHEN v.outcome IN ('failed', 'cancelled') THEN now() END,
                next_attempt_at = CASE WHEN v.outcome IN ('retry', 'postponed') THEN now() + make_interval(secs => v.delay) END
           FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, attempt int, status int, error text, outcome text, delay int)
          WHERE d.id = v.id AND d.attempts = v.attempt - 1 AND d.delivered_at IS NULL AND d.failed_at IS NULL
          RETURNING d.id)
         SELECT id FROM recorded`,
        [
          QUEUES.webhookDelivery,
          doneJobIds,
          ...(also?.bindings ?? []),
          JSON.stringify(attempts.map((attempt) => ({ ...attempt, delay: attempt.delaySeconds }))),
        ],
      );
      return new Set(rows.map((row) => row.id));
    },
  };
}
