/**
 * `send_validation_notice` on a bulk row: the row's top-level accounts (a parent covers its
 * children) each get a notice, by a job enqueued in the chunk's own transaction (so it exists
 * exactly when the accounts do) and run as POST /debt-accounts/{id}/validation-notice with no
 * body. A job run twice (a crash after sending) finds the account already noticed and sends
 * nothing more.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Environment, Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { withClock } from '../kernel/clock';
import { enqueueManyIn, QUEUES } from '../jobs/queue';
import { validationNoticeService, type NoticeDeps } from './validation-notice-service';
import { validationNoticeRepo } from './validation-notice-repo';

export interface NoticeJob {
  organizationId: string;
  environment: Environment;
  debtAccountId: string;
}

/**
 * The top-level accounts of the rows that asked for a notice. `passing` are the chunk's rows
 * that were written, in the order the writer made their customers (`written.customerIds`).
 */
export function noticeAccounts(passing: { payload: { send_validation_notice?: boolean } }[], written: { customerIds: string[]; accounts: { id: string; customer_id: string; parent_id: string | null }[] }): string[] {
  const asked = new Set(passing.flatMap((row, index) => (row.payload.send_validation_notice ? [written.customerIds[index]!] : [])));
  return written.accounts.filter((account) => account.parent_id === null && asked.has(account.customer_id)).map((account) => account.id);
}

export async function enqueueNotices(deps: Pick<AppDeps, 'boss'>, trx: Knex.Transaction, tenant: Tenant, accountIds: string[]): Promise<void> {
  await enqueueManyIn(
    deps.boss,
    trx,
    accountIds.map((debtAccountId) => ({
      name: QUEUES.validationNotice,
      data: { organizationId: tenant.organizationId, environment: tenant.environment, debtAccountId } satisfies NoticeJob,
      retryLimit: 3,
      retryDelay: 30,
    })),
  );
}

export async function runNoticeJob(deps: NoticeDeps & Pick<AppDeps, 'logger'>, job: NoticeJob): Promise<void> {
  const tenant = await withClock(deps.db, { organizationId: job.organizationId, environment: job.environment, tokenHash: '' });
  if (await validationNoticeRepo(deps.db, tenant).latestOf(job.debtAccountId)) return;
  try {
    await validationNoticeService(deps).send(tenant, job.debtAccountId, {});
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    deps.logger.warn({ organizationId: job.organizationId, debtAccountId: job.debtAccountId, errors: error.fieldErrors }, `validation notice of a bulk import not sent: ${error.message}`);
  }
}
