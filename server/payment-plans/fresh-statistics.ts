/**
 * The planner's statistics of the tables the due work grows, kept up with them. Autovacuum
 * analyzes a table once 10% of it changed, and looks once a minute at best: while due work
 * catches up (thousands of instalments a minute, each a charge, its allocation, its transaction
 * and an attempt), the planner still sees these tables as they were, nearly empty, and scans
 * them whole where an index finds a few rows. A named prepared statement keeps the plan it made
 * then until the table is analyzed again, and so does PostgreSQL's own foreign-key check (`SELECT
 * 1 FROM charges x WHERE id = $1 FOR KEY SHARE`, planned once per connection): at bench size
 * (bench:scheduler, 10,000 instalments) that check read all of `charges` for every allocation,
 * transaction and attempt inserted (63 of the 81 sampled plans that scanned `charges`). So, as for the job queue (jobs/queue.ts), every
 * process looks every 10 seconds (one cheap query) and analyzes a table whose rows changed by
 * more than 1000 + 2% since its last analysis; the analysis also makes every prepared plan on
 * it be planned anew. It only keeps the planner informed; nothing depends on it for correctness.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';

/** What the due work inserts into or moves from one status to another, row by row. */
export const GROWING_TABLES = ['charges', 'charge_allocations', 'transactions', 'payment_plan_charges', 'payment_plan_charge_attempts'] as const;

const CHECK_MS = 10_000;

/** The tables of GROWING_TABLES whose statistics lag behind them, analyzed. */
export async function analyzeStaleTables(db: Knex): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { relname: string }[] }>(
    `SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY(?::text[]) AND n_mod_since_analyze > 1000 + 0.02 * n_live_tup`,
    [[...GROWING_TABLES]],
  );
  for (const { relname } of rows) await db.raw('ANALYZE ??', [relname]);
  return rows.map((row) => row.relname);
}

/** Checks at once, then every 10 seconds until `stopped` fires once; the timer never keeps the process alive. */
export function keepStatisticsFresh(db: Knex, logger: Logger, stopped: (stop: () => void) => void): void {
  let running = false;
  const check = () => {
    if (running) return;
    running = true;
    analyzeStaleTables(db)
      .catch((error) => logger.warn({ err: error }, 'could not refresh the statistics of the due work tables'))
      .finally(() => (running = false));
  };
  const timer = setInterval(check, CHECK_MS);
  timer.unref();
  stopped(() => clearInterval(timer));
  check();
}
