/** The sandbox clock's row: its offset from real time, and whether an advance is running. */
import type { Knex } from 'knex';
import { SANDBOX_CLOCKS } from '../kernel/clock';

export type ClockStatus = 'ready' | 'advancing';

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
