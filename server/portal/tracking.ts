/**
 * Tracking events (spec 6.5): what a customer did in the Portal, recorded as a row of
 * `portal_activity` and told through the events port in the same transaction as the change it
 * reports (a payment's event commits or rolls back with the payment's own records).
 */
import type { Knex } from 'knex';
import type { EventName, EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';

export interface Activity {
  event: EventName;
  deviceId: string;
  occurredAt: Date;
  customerId?: string | null;
  debtAccountId?: string | null;
}

export async function track(db: Knex, events: EventRecorder, tenant: Tenant, activities: Activity[]): Promise<void> {
  if (activities.length === 0) return;
  const record = async (trx: Knex.Transaction) => {
    const rows: { id: string; event: EventName }[] = await trx('portal_activity')
      .insert(
        activities.map((activity) => ({
          organization_id: tenant.organizationId,
          environment: tenant.environment,
          event: activity.event,
          occurred_at: activity.occurredAt,
          device_id: activity.deviceId,
          customer_id: activity.customerId ?? null,
          debt_account_id: activity.debtAccountId ?? null,
        })),
      )
      .returning(['id', 'event']);
    await events.record(trx, tenant, rows.map((row) => ({ name: row.event, ids: [row.id] })));
  };
  if ('isTransaction' in db && db.isTransaction) await record(db as Knex.Transaction);
  else await db.transaction(record);
}
