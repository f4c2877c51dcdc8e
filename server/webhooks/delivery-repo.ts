/**
 * SQL of the delivery worker. The worker serves every tenant: its jobs carry delivery and
 * webhook ids that were written by tenant-scoped code, so these queries go by id alone.
 */
import type { Knex } from 'knex';
import { eventBodyText } from '../event-body';
import { JOB_TABLE, QUEUES } from '../jobs/queue';
import { SLOW_PRIORITY, type AttemptOutcome } from './delivery-jobs';
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
     * minutes, not once per batch). A webhook entering the lane has its waiting attempts moved
     * behind everyone else's at once: one pass over the queue's waiting jobs, rather than each
     * of them fetched and put back by a worker.
     */
    async markSlow(webhookIds: string[]): Promise<number> {
      if (webhookIds.length === 0) return 0;
      const { rows } = await db.raw<{ rows: { id: string; entered: boolean }[] }>(
        `UPDATE ${WEBHOOKS} AS w SET slow_until = now() + make_interval(mins => ${SLOW_LANE_MINUTES})
           FROM (SELECT id, COALESCE(slow_until > now(), false) AS was FROM ${WEBHOOKS} WHERE id = ANY (?::uuid[]) FOR UPDATE) AS old
          WHERE w.id = old.id AND (w.slow_until IS NULL OR w.slow_until < now() + make_interval(mins => ${SLOW_LANE_MINUTES / 2}))
          RETURNING w.id, NOT old.was AS entered`,
        [webhookIds],
      );
      const entered = rows.filter((row) => row.entered).map((row) => row.id);
      if (entered.length === 0) return 0;
      const moved = await db.raw<{ rowCount: number }>(
        // A job locked by a worker fetching or completing it is skipped: whatever that worker
        // enqueues for it again goes to the slow lane anyway.
        // One pass over the waiting jobs (the backlog), each looked up by its delivery's key,
        // once (MATERIALIZED): as `id IN (subquery … FOR UPDATE)` PostgreSQL may run the
        // subquery again for every job, which over a backlog of thousands took minutes and held
        // the jobs it had locked (pg-boss's maintenance waited on them).
        `WITH moved AS MATERIALIZED (
           SELECT j.id FROM ${JOB_TABLE} j JOIN ${DELIVERIES} d ON d.id = (j.data->>'deliveryId')::uuid
            WHERE j.name = ? AND j.state < 'active' AND j.priority > ? AND d.webhook_id = ANY (?::uuid[])
              FOR UPDATE OF j SKIP LOCKED)
         UPDATE ${JOB_TABLE} AS job SET priority = ? FROM moved WHERE job.name = ? AND job.id = moved.id`,
        [QUEUES.webhookDelivery, SLOW_PRIORITY, entered, SLOW_PRIORITY, QUEUES.webhookDelivery],
      );
      return moved.rowCount;
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
