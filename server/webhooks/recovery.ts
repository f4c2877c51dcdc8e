/**
 * Recovery (after Svix): the events of a webhook's subscribed types recorded in a window while
 * it existed, and not yet answered 2XX by it, delivered again. The request stores a task and
 * queues its job in one transaction; the job (pg-boss, durable) walks the window in order of
 * occurrence, a batch per transaction: each event's delivery to this webhook is made when it
 * had none (recorded while the webhook was disabled) or started over when it had failed for
 * good (keeping its id, the `webhook-id` the receiver may have seen), and its first attempt
 * queued. A delivered or still running delivery is left alone. The task's cursor moves with
 * each batch, so a job run again after a crash goes on where it stopped and queues nothing twice.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { enqueueIn, enqueueManyIn, QUEUES } from '../jobs/queue';
import { nowFor } from '../kernel/clock';
import { deliveryJob } from './delivery-jobs';
import { webhookRepo } from './webhook-repo';

type S = components['schemas'];

const RECOVERIES = 'webhook_recoveries';
const BATCH = 500;
const DAY_MS = 86_400_000;

export interface RecoveryJob {
  recoveryId: string;
}

interface RecoveryRow {
  id: string;
  webhook_id: string;
  status: 'pending' | 'running' | 'completed';
  since: Date;
  until: Date;
  cursor_occurred_at: Date | null;
  cursor_sequence: string | null;
  queued: number;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = ['id', 'webhook_id', 'status', 'since', 'until', 'queued', 'created_at', 'completed_at'];

function toApi(row: Pick<RecoveryRow, 'id' | 'webhook_id' | 'status' | 'since' | 'until' | 'queued' | 'created_at' | 'completed_at'>): S['WebhookRecovery'] {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    status: row.status,
    since: row.since.toISOString(),
    until: row.until.toISOString(),
    queued: row.queued,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

/** The window's rules (times on the organization's clock; both ends included): since within retention and not ahead; until after since, not ahead. */
function window(body: S['WebhookRecoveryCreate'], now: Date, retentionDays: number): { since: Date; until: Date } {
  const since = new Date(body.since);
  const until = body.until === undefined ? now : new Date(body.until);
  if (since.getTime() < now.getTime() - retentionDays * DAY_MS) throw ApiError.field('since', `must be at most ${retentionDays} days ago (events are kept ${retentionDays} days)`);
  if (since > now) throw ApiError.field('since', 'must not be in the future');
  if (until > now) throw ApiError.field('until', 'must not be in the future');
  if (until <= since) throw ApiError.field('until', 'must be after since');
  return { since, until };
}

export function recoveryService(deps: Pick<AppDeps, 'db' | 'boss' | 'config' | 'clock'>) {
  const { db, boss, config, clock } = deps;
  return {
    async start(tenant: Tenant, webhookId: string, body: S['WebhookRecoveryCreate']): Promise<S['WebhookRecovery']> {
      const hook = await webhookRepo(db, tenant).find(webhookId);
      if (!hook) throw ApiError.notFound('Webhook');
      const { since, until } = window(body, nowFor(clock, tenant), config.eventRetentionDays);
      if (hook.status === 'disabled') throw ApiError.conflict('The webhook is disabled; enable it with PUT /webhooks/{id} before recovering.');
      return db.transaction(async (trx) => {
        const [row] = await trx(RECOVERIES).insert({ webhook_id: webhookId, since, until }).returning(COLUMNS);
        await enqueueIn(boss, trx, QUEUES.webhookRecovery, { recoveryId: row.id } satisfies RecoveryJob);
        return toApi(row);
      });
    },

    async find(tenant: Tenant, webhookId: string, taskId: string): Promise<S['WebhookRecovery']> {
      if (!(await webhookRepo(db, tenant).find(webhookId))) throw ApiError.notFound('Webhook');
      const row = await db(RECOVERIES).where({ id: taskId, webhook_id: webhookId }).first(COLUMNS);
      if (!row) throw ApiError.notFound('Recovery');
      return toApi(row);
    },
  };
}

/** One batch in one transaction; answers whether the task is done. */
async function recoverBatch(trx: Knex.Transaction, boss: AppDeps['boss'], recoveryId: string): Promise<boolean> {
  const task: RecoveryRow | undefined = await trx(RECOVERIES).where('id', recoveryId).forUpdate().first();
  if (!task || task.status === 'completed') return true;
  // Events in the window, of the types the webhook subscribes to now, recorded since it exists,
  // after the cursor, in order of occurrence.
  const { rows: events } = await trx.raw<{ rows: { id: string; occurred_at: Date; sequence: string }[] }>(
    `SELECT e.id, e.occurred_at, e.sequence
       FROM webhook_events e JOIN webhooks w ON w.id = ?
      WHERE e.organization_id = w.organization_id AND e.environment = w.environment
        AND e.name = ANY (w.events) AND e.created_at >= w.created_at
        AND e.occurred_at >= ? AND e.occurred_at <= ?
        AND (?::timestamptz IS NULL OR (e.occurred_at, e.sequence) > (?::timestamptz, ?::bigint))
      ORDER BY e.occurred_at, e.sequence
      LIMIT ${BATCH}`,
    [task.webhook_id, task.since, task.until, task.cursor_occurred_at, task.cursor_occurred_at, task.cursor_sequence],
  );
  let queued: string[] = [];
  if (events.length > 0) {
    const { rows } = await trx.raw<{ rows: { id: string; sequence: string }[] }>(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, object_id, sequence, next_attempt_at)
       SELECT ?, e.id, e.object_id, e.sequence, now() FROM webhook_events e WHERE e.id = ANY (?::uuid[])
       ON CONFLICT (webhook_id, event_id) DO UPDATE SET attempts = 0, failed_at = NULL, next_attempt_at = now()
        WHERE webhook_deliveries.failed_at IS NOT NULL
       RETURNING id, sequence`,
      [task.webhook_id, events.map((event) => event.id)],
    );
    queued = rows.sort((a, b) => Number(a.sequence) - Number(b.sequence)).map((row) => row.id);
    await enqueueManyIn(boss, trx, queued.map((deliveryId) => deliveryJob({ deliveryId, attempt: 1, webhookId: task.webhook_id })));
  }
  const last = events[events.length - 1];
  const done = events.length < BATCH;
  await trx(RECOVERIES)
    .where('id', recoveryId)
    .update({
      status: done ? 'completed' : 'running',
      queued: task.queued + queued.length,
      ...(last ? { cursor_occurred_at: last.occurred_at, cursor_sequence: last.sequence } : {}),
      ...(done ? { completed_at: trx.fn.now() } : {}),
    });
  return done;
}

export async function runRecovery(deps: Pick<AppDeps, 'db' | 'boss'>, job: RecoveryJob): Promise<void> {
  for (;;) {
    if (await deps.db.transaction((trx) => recoverBatch(trx, deps.boss, job.recoveryId))) return;
  }
}
