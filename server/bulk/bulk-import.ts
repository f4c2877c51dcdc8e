/**
 * The bulk-import job. Rows are taken a chunk at a time (FOR UPDATE SKIP LOCKED), checked and
 * written in one transaction that also marks them done; so a worker that dies mid-job leaves
 * only untouched rows pending, and the retried job creates nothing twice. When no row is left
 * the action completes, and the completion e-mail is queued in the same transaction.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { RecordedEvent } from '../events/events';
import type { Environment, Tenant } from '../kernel/tenant';
import { isUniqueViolation } from '../db/tenant';
import { enqueueIn, QUEUES } from '../jobs/queue';
import { checkRows, type PendingRow } from './bulk-rows';
import { writeRows, type Written } from './bulk-writer';
import { enqueueNotices, noticeAccounts } from '../validation-notices/bulk-notices';

export interface BulkJob {
  bulkActionId: string;
  organizationId: string;
  environment: Environment;
}

/** Retried if it fails; expired (and retried) if its worker vanished without a word. */
export const BULK_JOB_OPTIONS = { retryLimit: 5, retryDelay: 5, expireInSeconds: 300 };

/** What a chunk created, as the API would record it one request at a time. */
function created(written: Written): RecordedEvent[] {
  return [
    { name: 'location.create', ids: written.locationIds },
    { name: 'customer.create', ids: written.customerIds },
    { name: 'debt-account.create', ids: written.accounts.map((account) => account.id) },
  ];
}

/**
 * Claims, checks and writes the next rows; answers whether this runner may find more pending
 * rows. Rows are claimed in order of position, so when the last one claimed is the action's
 * last, every pending row not held by another runner is in this chunk.
 */
async function importChunk(deps: AppDeps, trx: Knex.Transaction, tenant: Tenant, bulkActionId: string, size: number): Promise<boolean> {
  const rows: (PendingRow & { last: boolean })[] = await trx('bulk_rows')
    .join('bulk_actions', 'bulk_actions.id', 'bulk_rows.bulk_action_id')
    .where({ 'bulk_rows.bulk_action_id': bulkActionId, 'bulk_rows.status': 'pending' })
    .orderBy('bulk_rows.position')
    .limit(size)
    .forUpdate('bulk_rows')
    .skipLocked()
    .select('bulk_rows.position', 'bulk_rows.payload', trx.raw('bulk_rows.position = bulk_actions.count - 1 AS last'));
  if (rows.length === 0) return false;
  const failures = await checkRows(trx, tenant, rows);
  const written = await writeRows(trx, tenant, bulkActionId, rows, failures);
  await deps.events.record(trx, tenant, created(written));
  await enqueueNotices(deps, trx, tenant, noticeAccounts(rows.filter((row) => !failures.has(row.position)), written));
  // A short chunk was the last this runner could claim: rows another runner holds are its to
  // finish, and complete() waits for them (it completes only with no row pending).
  return rows.length === size && !rows[rows.length - 1]!.last;
}

/**
 * Completes the action once no row of it is pending, in one statement. A runner that still
 * sees rows pending leaves them to the runner holding them, whose own complete() comes after
 * its commit and sees every row done; of two runners completing at once, the row lock makes
 * the second find the action no longer pending.
 */
async function complete(deps: AppDeps, job: BulkJob): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const { rows } = await trx.raw(
      `UPDATE bulk_actions a SET status = 'completed', completed_at = now()
        WHERE a.id = ? AND a.status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM bulk_rows r WHERE r.bulk_action_id = a.id AND r.status = 'pending')
       RETURNING a.count,
                 (SELECT count(*)::int FROM bulk_rows r WHERE r.bulk_action_id = a.id AND r.status = 'failed') AS failed,
                 (SELECT o.notification_email FROM organizations o WHERE o.id = a.organization_id) AS notification_email`,
      [job.bulkActionId],
    );
    const action: { count: number; failed: number; notification_email: string | null } | undefined = rows[0];
    if (!action) return;
    if (action.notification_email) {
      await enqueueIn(deps.boss, trx, QUEUES.email, {
        to: action.notification_email,
        subject: `Bulk action ${job.bulkActionId} completed`,
        text:
          `Your bulk action ${job.bulkActionId} (${job.environment}) has completed: ${action.count} rows, ` +
          `${action.count - action.failed} created, ${action.failed} failed. ` +
          `GET /api/v1/bulk/${job.bulkActionId}/errors lists the failed rows.`,
      });
    }
    const tenant: Tenant = { organizationId: job.organizationId, environment: job.environment, tokenHash: '' };
    await deps.events.record(trx, tenant, [{ name: 'import.complete', ids: [job.bulkActionId] }]);
  });
}

export async function runBulkImport(deps: AppDeps, job: BulkJob): Promise<void> {
  const tenant: Tenant = { organizationId: job.organizationId, environment: job.environment, tokenHash: '' };
  // By default a whole action (POST /bulk takes up to 1000 rows) is one chunk: each chunk pays
  // about ten round trips and a commit whatever its size, which was a tenth of the import.
  let size = deps.config.bulkChunkRows;
  for (;;) {
    try {
      if (!(await deps.db.transaction((trx) => importChunk(deps, trx, tenant, job.bulkActionId, size)))) break;
    } catch (error) {
      // Someone else created one of these identifiers after the check (through the API): go on
      // one row at a time, so the check sees it and only that row fails.
      if (!isUniqueViolation(error) || size === 1) throw error;
      size = 1;
    }
  }
  await complete(deps, job);
}

/** Queues the import of every action still pending (after a crash, a deploy, a restart). */
export async function resumePendingBulkActions(deps: AppDeps): Promise<void> {
  const pending: { id: string; organization_id: string; environment: Environment }[] = await deps
    .db('bulk_actions')
    .where({ status: 'pending' })
    .select('id', 'organization_id', 'environment');
  for (const action of pending) {
    const job: BulkJob = { bulkActionId: action.id, organizationId: action.organization_id, environment: action.environment };
    await deps.boss.send(QUEUES.bulkImport, job, BULK_JOB_OPTIONS);
  }
}
