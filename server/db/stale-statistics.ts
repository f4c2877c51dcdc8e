/**
 * The planner's statistics kept up with tables that grow faster than autovacuum looks. Autovacuum
 * comes round once a minute at best and analyzes a table once 10% of it changed; under a burst of
 * work (a queue that got 400,000 jobs, due work inserting thousands of rows a minute) the planner
 * meanwhile sees the table as it was, nearly empty, and scans it whole where an index finds a few
 * rows; a named prepared statement keeps that plan until the table is analyzed again. So a
 * process looks every 10 seconds (one cheap query) and analyzes each table of its list whose rows
 * changed by more than 1000 + 2% since its last analysis. It only keeps the planner informed;
 * nothing depends on it for correctness. Used for the job queue (jobs/queue.ts) and the due work's
 * tables (payment-plans/fresh-statistics.ts).
 */

/** How often a process looks. */
export const STALE_CHECK_MS = 10_000;

/** The rule, over `pg_stat_user_tables` (as `alias`): more than 1000 + 2% of the rows changed since the last analysis. */
export const isStale = (alias: string) => `${alias}.n_mod_since_analyze > 1000 + 0.02 * ${alias}.n_live_tup`;

/**
 * Runs `analyzeStale` (which finds the stale tables of its list, with `isStale`, and analyzes
 * them) every 10 seconds, and at once when `atOnce`, never two at a time, until `stopped` fires
 * once. A failure is handed to `failed` and the next look comes as usual; the timer never keeps
 * the process alive.
 */
export function keepAnalyzed(analyzeStale: () => Promise<unknown>, failed: (error: unknown) => void, stopped: (stop: () => void) => void, { atOnce }: { atOnce: boolean }): void {
  let running = false;
  const check = () => {
    if (running) return;
    running = true;
    analyzeStale()
      .catch(failed)
      .finally(() => (running = false));
  };
  const timer = setInterval(check, STALE_CHECK_MS);
  timer.unref();
  stopped(() => clearInterval(timer));
  if (atOnce) check();
}
