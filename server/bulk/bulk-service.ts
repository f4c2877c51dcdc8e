import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import { enqueueIn, QUEUES } from '../jobs/queue';
import { copyRows } from '../db/copy-rows';
import { wakeWorker } from '../jobs/wake';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { itemizationOf } from '../debt-accounts/itemization';
import type { Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import type { BulkItem } from './bulk-rows';
import { BULK_JOB_OPTIONS, type BulkJob } from './bulk-import';
import { todayUtc } from '../kernel/dates';
import { nowFor } from '../kernel/clock';

type Schemas = components['schemas'];

/** Structure rules the schema cannot state; any failure refuses the whole request. */
function checkStructure(items: BulkItem[], now: Date): void {
  const today = todayUtc(now);
  const errors: FieldErrors = {};
  items.forEach((item, i) => {
    const accounts = (item.parent_debt_accounts?.length ?? 0) + (item.debt_accounts?.length ?? 0);
    if (accounts > 0 && !item.location) errors[`[${i}].location`] = ['is required when the row has debt accounts'];
    if (item.customer.date_of_birth && item.customer.date_of_birth > today) errors[`[${i}].customer.date_of_birth`] = ['must not be in the future'];
    const notice = item.customer.email_creditor_notice_date;
    if (notice && item.customer.email_source !== 'creditor') errors[`[${i}].customer.email_creditor_notice_date`] = ['is recorded only for an address with email_source creditor'];
    else if (notice && notice > today) errors[`[${i}].customer.email_creditor_notice_date`] = ['must not be in the future'];
    (item.debt_accounts ?? []).forEach((account, j) => {
      const checked = itemizationOf(account.itemization, today);
      if ('error' in checked) errors[`[${i}].debt_accounts[${j}].itemization.itemization_date`] = [checked.error];
    });
  });
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
}

export type BulkDeps = Pick<AppDeps, 'db' | 'boss' | 'clock'>;

/** Stores the rows and queues their import in one transaction, and answers at once. */
async function create({ db, boss, clock }: BulkDeps, tenant: Tenant, items: BulkItem[]): Promise<Schemas['BulkAction']> {
  checkStructure(items, nowFor(clock, tenant));
  const action = await db.transaction(async (trx) => {
    const [action] = await trx('bulk_actions')
      .insert({ organization_id: tenant.organizationId, environment: tenant.environment, count: items.length })
      .returning<{ id: string }[]>(['id']);
    const bulkActionId = action!.id;
    await copyRows(
      trx,
      'bulk_rows',
      items.map((payload, position) => ({ bulk_action_id: bulkActionId, position, organization_id: tenant.organizationId, environment: tenant.environment, payload })),
    );
    const job: BulkJob = { bulkActionId, organizationId: tenant.organizationId, environment: tenant.environment };
    await enqueueIn(boss, trx, QUEUES.bulkImport, job, BULK_JOB_OPTIONS);
    return { bulk_id: bulkActionId, count: items.length, status: 'pending' as const };
  });
  // Committed: this process's worker can start now instead of at its next poll.
  wakeWorker(boss, QUEUES.bulkImport);
  return action;
}

function action(db: Knex, tenant: Tenant, id: string) {
  return db('bulk_actions').where({ id, organization_id: tenant.organizationId, environment: tenant.environment });
}

async function progress({ db }: BulkDeps, tenant: Tenant, id: string): Promise<Schemas['BulkActionProgress']> {
  // The action and its counts in one round trip: clients poll this while the import runs.
  const row = await action(db, tenant, id)
    .joinRaw(
      `CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE r.status <> 'pending')::int AS processed, count(*) FILTER (WHERE r.status = 'failed')::int AS failed
                             FROM bulk_rows r WHERE r.bulk_action_id = bulk_actions.id) counts`,
    )
    .first('id', 'status', 'count', 'created_at', 'completed_at', 'counts.processed', 'counts.failed');
  if (!row) throw ApiError.notFound('Bulk action');
  return {
    bulk_id: row.id,
    status: row.status,
    count: row.count,
    processed: row.processed,
    failed: row.failed,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

interface FailedRow {
  position: number;
  payload: BulkItem;
  errors: Schemas['BulkActionError']['errors'];
  processed_at: Date;
}

/** One page of the failed rows, by position; 404 for an action not of this tenant. */
async function failedRows({ db }: BulkDeps, tenant: Tenant, id: string, { page, limit }: PageRequest): Promise<Listed<Schemas['BulkActionError']>> {
  if (!(await action(db, tenant, id).first('id'))) throw ApiError.notFound('Bulk action');
  const failed = () => db('bulk_rows').where({ bulk_action_id: id, status: 'failed' });
  const [count] = await failed().count<{ count: string }[]>({ count: '*' });
  const rows: FailedRow[] = await failed()
    .orderBy('position')
    .limit(limit)
    .offset((page - 1) * limit)
    .select('position', 'payload', 'errors', 'processed_at');
  return {
    total: Number(count?.count ?? 0),
    // The submitted date of an error record is when its row was processed.
    rows: rows.map((row) => ({ created_at: row.processed_at })),
    data: rows.map((row) => ({ id: row.position, payload: row.payload, errors: row.errors })),
  };
}

export function bulkService(deps: BulkDeps) {
  return {
    create: (tenant: Tenant, items: BulkItem[]) => create(deps, tenant, items),
    progress: (tenant: Tenant, id: string) => progress(deps, tenant, id),
    failedRows: (tenant: Tenant, id: string, page: PageRequest) => failedRows(deps, tenant, id, page),
  };
}
