/**
 * The sandbox clock: each organization's sandbox has its own time, which starts at real time,
 * runs at real speed and can only be moved forward (Stripe's test clocks are the model). It is
 * kept as an offset from real time, so production, which has no offset, reads the real clock
 * through the same function.
 */
import type { Knex } from 'knex';
import type { Tenant } from './tenant';

export const SANDBOX_CLOCKS = 'sandbox_clocks';

export type ClockStatus = 'ready' | 'advancing';

/** The time of a tenant's rules: the app's clock, plus the sandbox's offset. */
export function nowFor(clock: () => Date, tenant: Tenant): Date {
  return new Date(clock().getTime() + (tenant.environment === 'sandbox' ? (tenant.clockOffsetMs ?? 0) : 0));
}

/** `tenant` with its sandbox clock loaded, for work that does not come through a token (workers, the Portal). */
export async function withClock(db: Knex, tenant: Tenant): Promise<Tenant> {
  if (tenant.environment !== 'sandbox') return { ...tenant, clockOffsetMs: 0 };
  const row = await db(SANDBOX_CLOCKS).where({ organization_id: tenant.organizationId }).first('offset_ms');
  return { ...tenant, clockOffsetMs: Number(row?.offset_ms ?? 0) };
}

export interface ClockRow {
  offset_ms: number;
  status: ClockStatus;
  /** An advance whose process died: `advancing` for more than 5 minutes. */
  abandoned?: boolean;
}

export function sandboxClockRepo(db: Knex, organizationId: string) {
  return {
    async read(): Promise<ClockRow> {
      const row = await db(SANDBOX_CLOCKS).where({ organization_id: organizationId }).first('offset_ms', 'status');
      return row ? { offset_ms: Number(row.offset_ms), status: row.status } : { offset_ms: 0, status: 'ready' };
    },

    /** The clock's row, locked for this transaction (made on first use). */
    async lock(): Promise<ClockRow> {
      await db(SANDBOX_CLOCKS).insert({ organization_id: organizationId }).onConflict('organization_id').ignore();
      const row = await db(SANDBOX_CLOCKS)
        .where({ organization_id: organizationId })
        .forUpdate()
        .first('offset_ms', 'status', db.raw(`updated_at < now() - interval '5 minutes' AS abandoned`));
      return { offset_ms: Number(row.offset_ms), status: row.status, abandoned: row.abandoned };
    },

    async set(offsetMs: number, status: ClockStatus): Promise<void> {
      await db(SANDBOX_CLOCKS).where({ organization_id: organizationId }).update({ offset_ms: offsetMs, status, updated_at: db.fn.now() });
    },
  };
}
