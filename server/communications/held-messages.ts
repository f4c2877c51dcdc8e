/**
 * Messages held by quiet hours leave at their `held_until` on their tenant's clock: the
 * scheduler's due work finds them (real time, or a sandbox clock moved past them) and queues
 * the same row for the mail job. An opt-out of its address since then (or its address found
 * to be a work address) suppresses it instead.
 */
import { countCommunication } from '../observability/metrics';
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { communicationRepo, COMMUNICATIONS } from './communication-repo';
import { enqueueDelivery } from './outgoing';
import { barredAddress, recipientOf } from './recipients';

export interface DueMessage {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  due_at: Date;
}

/** Held messages whose time came at `realNow` on their tenant's clock, earliest first. */
export async function dueHeldMessages(db: Knex, realNow: Date, limit = 200): Promise<DueMessage[]> {
  const { rows } = await db.raw<{ rows: DueMessage[] }>(
    `SELECT m.id, m.organization_id, m.environment, m.held_until AS due_at
       FROM ${COMMUNICATIONS} m
       LEFT JOIN sandbox_clocks c ON m.environment = 'sandbox' AND c.organization_id = m.organization_id
      WHERE m.status = 'held' AND m.held_until <= ?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
      ORDER BY m.held_until, m.id
      LIMIT ?`,
    [realNow, limit],
  );
  return rows;
}

/** One tenant's held messages due at or before `upTo` (the sandbox clock's advance). */
export async function dueHeldMessagesOf(db: Knex, tenant: Tenant, upTo: Date, limit = 200): Promise<DueMessage[]> {
  return db(COMMUNICATIONS)
    .where({ organization_id: tenant.organizationId, environment: tenant.environment, status: 'held' })
    .where('held_until', '<=', upTo)
    .orderBy([{ column: 'held_until' }, { column: 'id' }])
    .limit(limit)
    .select('id', 'organization_id', 'environment', 'held_until AS due_at');
}

/** Lets the held message `id` leave at `now`; answers whether it was due (another process may have done it: that counts). */
export async function releaseHeld(deps: Pick<AppDeps, 'db' | 'boss'>, tenant: Tenant, id: string, now: Date): Promise<boolean> {
  return deps.db.transaction(async (trx) => {
    const communications = communicationRepo(trx, tenant);
    const row = await communications.find(id, { forUpdate: true });
    if (!row || row.status !== 'held') return true;
    if (row.held_until && row.held_until.getTime() > now.getTime()) return false;
    const recipient = await recipientOf(trx, tenant, row.customer_id);
    const barred = recipient ? await barredAddress(trx, tenant, recipient, row.to) : 'customer_deleted';
    if (barred) {
      await communications.update(id, { status: 'suppressed', reason: barred, updated_at: now });
      countCommunication('suppressed', barred);
      return true;
    }
    // The reason stays quiet_hours: the record shows why it left later than it was written.
    await communications.update(id, { status: 'queued', updated_at: now });
    await enqueueDelivery(deps, trx, id);
    return true;
  });
}
