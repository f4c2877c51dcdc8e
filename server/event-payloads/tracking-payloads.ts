/**
 * Tracking payloads (spec 6.5) from the activity rows the Portal writes: the event, when it
 * happened, the device and the customer and account it is tied to, by their ids and external ids.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';

export interface ActivityRow {
  id: string;
  event: string;
  occurred_at: Date;
  device_id: string;
  customer_id: string | null;
  customer_external_id: string | null;
  debt_account_id: string | null;
  debt_account_external_id: string | null;
}

export async function loadActivity(db: Knex, tenant: Tenant, ids: string[]): Promise<Map<string, ActivityRow>> {
  if (ids.length === 0) return new Map();
  const rows: ActivityRow[] = await scoped(db, 'portal_activity', tenant)
    .whereIn('portal_activity.id', ids)
    .leftJoin('customers', 'customers.id', 'portal_activity.customer_id')
    .leftJoin('debt_accounts', 'debt_accounts.id', 'portal_activity.debt_account_id')
    .select(
      'portal_activity.id',
      'portal_activity.event',
      'portal_activity.occurred_at',
      'portal_activity.device_id',
      'portal_activity.customer_id',
      'customers.external_id as customer_external_id',
      'portal_activity.debt_account_id',
      'debt_accounts.external_id as debt_account_external_id',
    );
  return new Map(rows.map((row) => [row.id, row]));
}

export function trackingPayload(row: ActivityRow): object {
  const trackables: Record<string, { uuid: string; external_id: string | null }> = {};
  if (row.customer_id) trackables.customer = { uuid: row.customer_id, external_id: row.customer_external_id };
  if (row.debt_account_id) trackables.debt_account = { uuid: row.debt_account_id, external_id: row.debt_account_external_id };
  return { event: row.event, occurred_at: row.occurred_at.toISOString(), device_id: row.device_id, trackables };
}
