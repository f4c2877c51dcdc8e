/**
 * Whether this machine's server processes could open more connections than the database
 * allows: WEB_CONCURRENCY × (DATABASE_POOL_MAX + the job queue's own) against max_connections
 * less the connections PostgreSQL keeps for superusers. Pools open connections only as they are
 * needed, so an overcommitted deployment runs until a busy moment, and then fails requests with
 * "too many clients": the start says so at once instead. Processes on other machines over the
 * same database are not counted (they cannot be seen from here).
 */
import type { Knex } from 'knex';

export interface ConnectionNeed {
  processes: number;
  pool: number;
  /** Each process's job queue (pg-boss), beside its pool. */
  queue: number;
}

/** The warning for an operator, or undefined when the processes fit. */
export async function connectionBudgetWarning(db: Knex, need: ConnectionNeed): Promise<string | undefined> {
  const { rows } = await db.raw<{ rows: { max: number; reserved: number }[] }>(
    `SELECT current_setting('max_connections')::int AS max, current_setting('superuser_reserved_connections')::int AS reserved`,
  );
  const { max, reserved } = rows[0]!;
  const allowed = max - reserved;
  const wanted = need.processes * (need.pool + need.queue);
  if (wanted <= allowed) return undefined;
  return (
    `WEB_CONCURRENCY ${need.processes} × (DATABASE_POOL_MAX ${need.pool} + ${need.queue} for the job queue) = ${wanted} connections at the busiest, ` +
    `but the database allows ${allowed} (max_connections ${max} less ${reserved} kept for superusers): ` +
    'lower DATABASE_POOL_MAX (10 at least) or WEB_CONCURRENCY, or raise max_connections'
  );
}
