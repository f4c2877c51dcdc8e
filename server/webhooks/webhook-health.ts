/**
 * Endpoints that fail loudly (after Svix): a webhook whose every attempt has failed since
 * `failing_since` is warned by e-mail WEBHOOK_DISABLE_AFTER_DAYS less one day after that, and
 * disabled (`status` `disabled`, with a `disabled_reason`) once those days have passed and
 * the warning is at least a day old; an answer `410 Gone` disables at once. Each disabling
 * sends the organization a `webhook.disabled` e-mail. Any 2XX answer clears the count.
 *
 * The check runs on a pg-boss schedule (every 10 minutes, in whichever process takes it), and
 * reads the app's clock, so tests move time instead of waiting days.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import { enqueueManyIn, QUEUES, type Boss } from '../jobs/queue';
import type { Mail } from '../mail/mailer';

const DAY_MS = 86_400_000;
export const HEALTH_CRON = '*/10 * * * *';
export const GONE_REASON = 'The endpoint answered 410 Gone.';

interface Noted {
  webhookId: string;
  ok: boolean;
}

/** After attempts: a success clears the failing period, a failure starts it (if not started); rows already so are not written. */
export async function noteAttempts(trx: Knex, now: Date, noted: Noted[]): Promise<void> {
  const statement = noteAttemptsStatement(now, noted);
  if (statement) await trx.raw(statement.sql, statement.bindings);
}

/** noteAttempts as a statement, for the delivery worker to run within its own (delivery-repo.ts). */
export function noteAttemptsStatement(now: Date, noted: Noted[]): { sql: string; bindings: string[] } | undefined {
  if (noted.length === 0) return undefined;
  const byHook = new Map<string, boolean>();
  for (const { webhookId, ok } of noted) byHook.set(webhookId, (byHook.get(webhookId) ?? false) || ok);
  return {
    sql: `UPDATE webhooks AS w
             SET failing_since = CASE WHEN v.ok THEN NULL ELSE COALESCE(w.failing_since, ?::timestamptz) END,
                 warned_at = CASE WHEN v.ok THEN NULL ELSE w.warned_at END
            FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, ok boolean)
           WHERE w.id = v.id AND w.status = 'enabled' AND (w.failing_since IS NULL) <> v.ok`,
    bindings: [now.toISOString(), JSON.stringify([...byHook].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([id, ok]) => ({ id, ok })))],
  };
}

interface Disabled {
  id: string;
  url: string;
  environment: string;
  notification_email: string | null;
}

/** Disables enabled webhooks with a reason, and e-mails each organization (webhook.disabled). */
export async function disableWebhooks(trx: Knex.Transaction, boss: Boss, ids: string[], reason: string, now: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await trx.raw<{ rows: Disabled[] }>(
    `UPDATE webhooks AS w SET status = 'disabled', disabled_reason = ?, disabled_at = ?, failing_since = NULL, warned_at = NULL, updated_at = now()
       FROM organizations o
      WHERE w.id = ANY(?::uuid[]) AND w.status = 'enabled' AND o.id = w.organization_id
      RETURNING w.id, w.url, w.environment, o.notification_email`,
    [reason, now.toISOString(), ids],
  );
  const mails: Mail[] = rows.flatMap((row) =>
    row.notification_email
      ? [
          {
            to: row.notification_email,
            subject: `webhook.disabled: your webhook ${row.id} was disabled`,
            text:
              `Your webhook ${row.id} (${row.environment}) at ${row.url} was disabled: ${reason} ` +
              `Nothing more is delivered to it. Fix the endpoint, turn it back on with PUT /api/v1/webhooks/${row.id} and "status": "enabled", ` +
              `then fill the gap with POST /api/v1/webhooks/${row.id}/recover.`,
          },
        ]
      : [],
  );
  await enqueueManyIn(boss, trx, mails.map((data) => ({ name: QUEUES.email, data })));
  return rows.map((row) => row.id);
}

/** The schedule's work: warnings due, then disablings due. Answers what it did. */
export async function checkFailingWebhooks(deps: Pick<AppDeps, 'db' | 'boss' | 'config' | 'clock'>): Promise<{ warned: string[]; disabled: string[] }> {
  const { db, boss, config } = deps;
  const now = deps.clock();
  const days = config.webhookDisableAfterDays;
  const warnBefore = new Date(now.getTime() - (days - 1) * DAY_MS);
  const disableBefore = new Date(now.getTime() - days * DAY_MS);
  const dayAgo = new Date(now.getTime() - DAY_MS);
  return db.transaction(async (trx) => {
    const { rows: warnedRows } = await trx.raw<{ rows: (Disabled & { failing_since: Date })[] }>(
      `UPDATE webhooks AS w SET warned_at = ?
         FROM organizations o
        WHERE w.status = 'enabled' AND w.failing_since <= ? AND w.warned_at IS NULL AND o.id = w.organization_id
        RETURNING w.id, w.url, w.environment, w.failing_since, o.notification_email`,
      [now.toISOString(), warnBefore.toISOString()],
    );
    const mails: Mail[] = warnedRows.flatMap((row) =>
      row.notification_email
        ? [
            {
              to: row.notification_email,
              subject: `Your webhook ${row.id} will be disabled in 24 hours`,
              text:
                `Every delivery to your webhook ${row.id} (${row.environment}) at ${row.url} has failed since ${row.failing_since.toISOString()}. ` +
                `Unless one succeeds, it will be disabled 24 hours from now. GET /api/v1/webhooks/${row.id}/deliveries shows each failure.`,
            },
          ]
        : [],
    );
    await enqueueManyIn(boss, trx, mails.map((data) => ({ name: QUEUES.email, data })));
    const due: { id: string }[] = await trx('webhooks')
      .where('status', 'enabled')
      .where('failing_since', '<=', disableBefore)
      .where('warned_at', '<=', dayAgo)
      .select('id');
    const reason = `Every attempt failed for ${days} days.`;
    const disabled = await disableWebhooks(trx, boss, due.map((row) => row.id), reason, now);
    return { warned: warnedRows.map((row) => row.id), disabled };
  });
}

/** A rotated-out secret whose grace is over is forgotten (the worker stopped using it then already). */
export async function forgetExpiredSecrets(db: Knex, now: Date): Promise<number> {
  return db('webhooks')
    .where('previous_secret_expires_at', '<=', now)
    .update({ previous_secret_sealed: null, previous_secret_expires_at: null });
}

/** The schedule and its worker; every process registers both (pg-boss keeps one schedule). */
export async function startWebhookHealth(deps: Pick<AppDeps, 'db' | 'boss' | 'config' | 'clock' | 'logger'>): Promise<void> {
  await deps.boss.schedule(QUEUES.webhookHealth, HEALTH_CRON);
  await deps.boss.work(QUEUES.webhookHealth, { pollingIntervalSeconds: 30 }, async () => {
    await forgetExpiredSecrets(deps.db, deps.clock());
    const { warned, disabled } = await checkFailingWebhooks(deps);
    if (warned.length + disabled.length > 0) deps.logger.warn({ warned, disabled }, 'webhooks: failing endpoints warned or disabled');
  });
}
