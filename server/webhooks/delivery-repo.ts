/**
 * SQL of the delivery worker. The worker serves every tenant: its jobs carry delivery and
 * webhook ids that were written by tenant-scoped code, so these queries go by id alone.
 */
import type { Knex } from 'knex';
import { DELIVERIES, WEBHOOK_EVENTS, WEBHOOKS, type EventName } from './webhook-repo';

export interface DeliveryTarget {
  deliveryId: string;
  attempts: number;
  finished: boolean;
  event: EventName;
  payload: unknown;
  webhookId: string;
  url: string;
  secretSealed: string;
}

export interface Hook {
  id: string;
  url: string;
  secret_sealed: string;
}

export interface AttemptRecord {
  id: string;
  attempt: number;
  status: number | null;
  error: string | null;
  outcome: 'delivered' | 'retry' | 'failed';
}

export function deliveryRepo(db: Knex) {
  return {
    async targets(deliveryIds: string[]): Promise<Map<string, DeliveryTarget>> {
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
          `${WEBHOOK_EVENTS}.payload`,
          `${WEBHOOKS}.id as webhookId`,
          `${WEBHOOKS}.url`,
          `${WEBHOOKS}.secret_sealed as secretSealed`,
        );
      return new Map((rows as DeliveryTarget[]).map((row) => [row.deliveryId, row]));
    },

    async hooks(ids: string[]): Promise<Map<string, Hook>> {
      if (ids.length === 0) return new Map();
      const rows: Hook[] = await db(WEBHOOKS).whereIn('id', ids).select('id', 'url', 'secret_sealed');
      return new Map(rows.map((row) => [row.id, row]));
    },

    /**
     * Records attempts. A row is changed only when the attempt is the next one of a delivery
     * not yet finished, so a job run twice (its worker died after sending) counts once.
     * Answers the ids of the rows changed.
     */
    async record(attempts: AttemptRecord[], retryDelaySeconds: number): Promise<Set<string>> {
      if (attempts.length === 0) return new Set();
      const { rows } = await db.raw<{ rows: { id: string }[] }>(
        `UPDATE ${DELIVERIES} AS d
            SET attempts = v.attempt,
                last_status_code = v.status,
                last_error = v.error,
                delivered_at = CASE WHEN v.outcome = 'delivered' THEN now() END,
                failed_at = CASE WHEN v.outcome = 'failed' THEN now() END,
                next_attempt_at = CASE WHEN v.outcome = 'retry' THEN now() + make_interval(secs => ?) END
           FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, attempt int, status int, error text, outcome text)
          WHERE d.id = v.id AND d.attempts = v.attempt - 1 AND d.delivered_at IS NULL AND d.failed_at IS NULL
          RETURNING d.id`,
        [retryDelaySeconds, JSON.stringify(attempts)],
      );
      return new Set(rows.map((row) => row.id));
    },
  };
}
