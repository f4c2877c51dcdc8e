/**
 * The scheduler of due work, on pg-boss in the same database: a job every minute (pg-boss's
 * cron sends one per minute whatever the number of processes) and one at every start, so what
 * fell due while the service was down is caught up at once. The job runs a query over due
 * rows (due-work.ts); exactly once per instalment attempt is the database's, not the queue's,
 * so two processes running it at once are safe. While it runs, the statistics of the tables it
 * grows are kept fresh (fresh-statistics.ts).
 */
import type { AppDeps } from '../deps';
import { QUEUES } from '../jobs/queue';
import { runDueNow, type DueWorkPorts } from './due-work';
import { keepStatisticsFresh } from './fresh-statistics';

export async function startPlanScheduler(deps: AppDeps, ports: DueWorkPorts): Promise<void> {
  const { boss, logger } = deps;
  keepStatisticsFresh(deps.db, logger, (stop) => boss.once('stopped', stop));
  await boss.work(QUEUES.dueWork, { pollingIntervalSeconds: 2 }, async () => {
    const done = await runDueNow(deps, ports, deps.config.dueWorkChargesInFlight);
    if (done > 0) logger.info({ done }, 'due work carried out');
  });
  await boss.schedule(QUEUES.dueWork, '* * * * *', {}, { tz: 'UTC' });
  await boss.send(QUEUES.dueWork, {});
}
