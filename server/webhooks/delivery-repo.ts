/**
 * SQL of the delivery worker. The worker serves every tenant: its jobs carry delivery and
 * webhook ids that were written by tenant-scoped code, so these queries go by id alone.
 */
import type { Knex } from 'knex';
import type PgBoss from 'pg-boss';
import { eventBodyText } from '../kernel/event-body';
import { JOB_TABLE, JOB_WEBHOOK, QUEUES } from '../jobs/queue';
import type { AttemptOutcome, DeliveryJob } from './delivery-jobs';
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

export interface FetchLimits {
  /** The most jobs taken. */
  batchSize: number;
  /** The most jobs taken of each webhook named (its share of the process, less what it holds). */
  caps: Record<string, number>;
  /** The most jobs taken of any other webhook. */
  otherCap: number;
  /** Webhooks this process has seen slow (beside those in the slow lane in the database). */
  slow: string[];
  /** The most jobs taken of slow webhooks together. */
  slowCap: number;
}

const WAITING = `name = '${QUEUES.webhookDelivery}' AND state < 'active'`;

/**
 * The least a fetch reads of each webhook with due jobs: it reads of each twice its even share
 * of the batch (so of 4 webhooks, 50 each for a batch of 100), not its whole cap. With 1000
 * webhooks with jobs waiting, reading up to 64 of each (64,000 rows, for a batch of 100) made a
 * fetch 75 ms against pg-boss's 3.
 */
const MIN_SHARE = 8;

/**
 * The next due attempts of the webhook-delivery queue, taken as pg-boss's fetch takes them (the
 * same lock, the same columns and state, the queue being of the standard policy), but webhook by
 * webhook: each webhook's due jobs, oldest due first, up to its cap (`caps`, `otherCap`), by the
 * index on (webhook, start_after) (jobs/queue.ts); then the batch is the oldest due of those,
 * the slow lane's after every other's (at most `slowCap` of them). So a webhook that holds all it
 * may hold is not fetched at all: its backlog stays where it is, unread and unwritten, and every
 * other webhook's jobs are reached without passing it. (Fetched in pg-boss's order, a webhook
 * that had just turned slow came back in every fetch, half of it, each job put back by a write
 * until it was found slow and its whole backlog moved behind the others: that halved a fast
 * webhook's rate for as long as it took, seconds at a backlog of 30,000.) The webhooks with
 * waiting jobs are found by one index probe each, and each gives at most twice its even share
 * of the batch (`MIN_SHARE`). Jobs enqueued before jobs named their webhook
 * are one more lane (webhook ''), taken as any other webhook's.
 *
 * Run on pg-boss's own connections. Each job says whether its webhook is in the slow lane.
 */
export type FetchedJob = PgBoss.Job<DeliveryJob> & { slowLane: boolean };

export async function fetchJobs(boss: PgBoss, limits: FetchLimits): Promise<FetchedJob[]> {
  const { rows } = (await boss.getDb().executeSql(
    `WITH RECURSIVE hooks (hook) AS (
       (SELECT ${JOB_WEBHOOK} FROM ${JOB_TABLE} WHERE ${WAITING} ORDER BY 1 LIMIT 1)
       UNION ALL
       SELECT (SELECT ${JOB_WEBHOOK} FROM ${JOB_TABLE} WHERE ${WAITING} AND ${JOB_WEBHOOK} > hooks.hook ORDER BY 1 LIMIT 1)
         FROM hooks WHERE hooks.hook IS NOT NULL),
     lanes AS MATERIALIZED (
       SELECT h.hook, COALESCE(w.slow_until > now(), false) OR h.hook = ANY ($4::text[]) AS slow,
              LEAST($1::int, COALESCE(($2::jsonb ->> h.hook)::int, $3::int), GREATEST(${MIN_SHARE}, ceil(2.0 * $1 / count(*) OVER ())::int)) AS cap
         FROM hooks h LEFT JOIN ${WEBHOOKS} w ON w.id = NULLIF(h.hook, '')::uuid
        WHERE h.hook IS NOT NULL),
     candidates AS (
       SELECT c.id, c.start_after, c.created_on, lanes.slow
         FROM lanes CROSS JOIN LATERAL (
           SELECT id, start_after, created_on FROM ${JOB_TABLE}
            WHERE ${WAITING} AND ${JOB_WEBHOOK} = lanes.hook AND start_after < now()
            ORDER BY start_after LIMIT lanes.cap) c
        WHERE lanes.cap > 0),
     ranked AS (
       SELECT id, slow, start_after, created_on, row_number() OVER (PARTITION BY slow ORDER BY start_after, created_on, id) AS n FROM candidates),
     chosen AS (
       SELECT id, slow FROM ranked WHERE NOT slow OR n <= $5 ORDER BY slow, start_after, created_on, id LIMIT $1),
     next AS (
       SELECT id FROM ${JOB_TABLE} WHERE ${WAITING} AND id = ANY (ARRAY(SELECT id FROM chosen)) FOR UPDATE SKIP LOCKED)
     UPDATE ${JOB_TABLE} AS j
        SET state = 'active', started_on = now(),
            retry_count = CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END
       FROM next JOIN chosen USING (id)
      WHERE j.name = '${QUEUES.webhookDelivery}' AND j.id = next.id
     RETURNING j.id, j.name, j.data, EXTRACT(epoch FROM j.expire_in) AS "expireInSeconds", chosen.slow AS "slowLane"`,
    [limits.batchSize, JSON.stringify(limits.caps), limits.otherCap, limits.slow, limits.slowCap],
  )) as { rows: FetchedJob[] };
  return rows;
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
     * minutes, not once per batch), and takes those of it seen answering fast out of it
     * (delivery-lanes.ts). Nothing of their waiting jobs is written: the fetch reads the lane
     * from this row (`fetchJobs`). Its rows are locked in id order: two processes changing the
     * same rows cannot deadlock.
     */
    async setLanes({ slow, fast }: { slow: string[]; fast: string[] }): Promise<void> {
      if (slow.length === 0 && fast.length === 0) return;
      await db.raw(
        `UPDATE ${WEBHOOKS} SET slow_until = CASE WHEN id = ANY (?::uuid[]) THEN now() + make_interval(mins => ${SLOW_LANE_MINUTES}) END
          WHERE id IN (SELECT id FROM ${WEBHOOKS}
                        WHERE (id = ANY (?::uuid[]) AND (slow_until IS NULL OR slow_until < now() + make_interval(mins => ${SLOW_LANE_MINUTES / 2})))
                           OR (id = ANY (?::uuid[]) AND slow_until IS NOT NULL)
                        ORDER BY id FOR UPDATE)`,
        [slow, slow, fast],
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
