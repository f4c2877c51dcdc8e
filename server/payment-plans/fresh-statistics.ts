/**
 * The planner's statistics of the tables the due work grows, kept up with them. Autovacuum
 * analyzes a table once 10% of it changed, and looks once a minute at best: while due work
 * catches up (thousands of instalments a minute, each a charge, its allocation, its transaction
 * and an attempt), the planner still sees these tables as they were, nearly empty, and scans
 * them whole where an index finds a few rows; a named prepared statement, and PostgreSQL's own
 * foreign-key check (`SELECT 1 FROM charges x WHERE id = $1 FOR KEY SHARE`, planned once per
 * connection), keep the plan made then. At bench size (bench:scheduler, 10,000 instalments) that
 * check read all of `charges` for every allocation, transaction and attempt inserted. So these
 * tables are analyzed when stale, by db/stale-statistics.ts's rule, as the job queue's are.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isStale, keepAnalyzed } from '../db/stale-statistics';

/** What the due work inserts into or moves from one status to another, row by row. */
export const GROWING_TABLES = ['charges', 'charge_allocations', 'transactions', 'payment_plan_charges', 'payment_plan_charge_attempts'] as const;

/** The tables of GROWING_TABLES whose statistics lag behind them, analyzed. */
export async function analyzeStaleTables(db: Knex): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { relname: string }[] }>(
    `SELECT s.relname FROM pg_stat_user_tables s WHERE s.schemaname = current_schema() AND s.relname = ANY(?::text[]) AND ${isStale('s')}`,
    [[...GROWING_TABLES]],
  );
  for (const { relname } of rows) await db.raw('ANALYZE ??', [relname]);
  return rows.map((row) => row.relname);
}

/** Checks at once, then every 10 seconds until `stopped` fires once. */
export function keepStatisticsFresh(db: Knex, logger: Logger, stopped: (stop: () => void) => void): void {
  keepAnalyzed(
    () => analyzeStaleTables(db),
    (error) => logger.warn({ err: error }, 'could not refresh the statistics of the due work tables'),
    stopped,
    { atOnce: true },
  );
}
