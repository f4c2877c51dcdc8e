import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Boss } from '../jobs/queue';
import { enqueueIn, QUEUES } from '../jobs/queue';
import type { Tenant } from '../http/auth';
import { ApiError, type FieldErrors } from '../http/errors';
import type { BulkItem } from './bulk-rows';
import { BULK_JOB_OPTIONS, type BulkJob } from './bulk-import';
import { todayUtc } from '../dates';

type Schemas = components['schemas'];

/** Structure rules the schema cannot state; any failure refuses the whole request. */
function checkStructure(items: BulkItem[]): void {
  const today = todayUtc();
  const errors: FieldErrors = {};
  items.forEach((item, i) => {
    const accounts = (item.parent_debt_accounts?.length ?? 0) + (item.debt_accounts?.length ?? 0);
    if (accounts > 0 && !item.location) errors[`[${i}].location`] = ['is required when the row has debt accounts'];
    if (item.customer.date_of_birth && item.customer.date_of_birth > today) errors[`[${i}].customer.date_of_birth`] = ['must not be in the future'];
  });
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
}

/** Stores the rows and queues their import in one transaction, and answers at once. */
export async function createBulkAction(db: Knex, boss: Boss, tenant: Tenant, items: BulkItem[]): Promise<Schemas['BulkAction']> {
  checkStructure(items);
  return db.transaction(async (trx) => {
    const [action] = await trx('bulk_actions')
      .insert({ organization_id: tenant.organizationId, environment: tenant.environment, count: items.length })
      .returning<{ id: string }[]>(['id']);
    const bulkActionId = action!.id;
    await trx('bulk_rows').insert(
      items.map((payload, position) => ({
        bulk_action_id: bulkActionId,
        position,
        organization_id: tenant.organizationId,
        environment: tenant.environment,
        payload: JSON.stringify(payload),
      })),
    );
    const job: BulkJob = { bulkActionId, organizationId: tenant.organizationId, environment: tenant.environment };
    await enqueueIn(boss, trx, QUEUES.bulkImport, job, BULK_JOB_OPTIONS);
    return { bulk_id: bulkActionId, count: items.length, status: 'pending' as const };
  });
}

function action(db: Knex, tenant: Tenant, id: string) {
  return db('bulk_actions').where({ id, organization_id: tenant.organizationId, environment: tenant.environment });
}

export async function bulkProgress(db: Knex, tenant: Tenant, id: string): Promise<Schemas['BulkActionProgress']> {
  const row = await action(db, tenant, id).first('id', 'status', 'count', 'created_at', 'completed_at');
  if (!row) throw ApiError.notFound('Bulk action');
  const [counts] = await db('bulk_rows')
    .where({ bulk_action_id: id })
    .select(db.raw(`count(*) FILTER (WHERE status <> 'pending')::int AS processed, count(*) FILTER (WHERE status = 'failed')::int AS failed`));
  return {
    bulk_id: row.id,
    status: row.status,
    count: row.count,
    processed: counts.processed,
    failed: counts.failed,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at ? row.completed_at.toISOString() : null,
  };
}

export interface FailedRow {
  position: number;
  payload: BulkItem;
  errors: Schemas['BulkActionError']['errors'];
  processed_at: Date;
}

/** One page of the failed rows, by position; throws 404 for an action not of this tenant. */
export async function failedRows(db: Knex, tenant: Tenant, id: string, page: number, limit: number): Promise<{ total: number; rows: FailedRow[] }> {
  if (!(await action(db, tenant, id).first('id'))) throw ApiError.notFound('Bulk action');
  const failed = () => db('bulk_rows').where({ bulk_action_id: id, status: 'failed' });
  const [count] = await failed().count<{ count: string }[]>({ count: '*' });
  const rows = await failed()
    .orderBy('position')
    .limit(limit)
    .offset((page - 1) * limit)
    .select('position', 'payload', 'errors', 'processed_at');
  return { total: Number(count?.count ?? 0), rows };
}
