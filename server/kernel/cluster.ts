/**
 * WEB_CONCURRENCY > 1: this process becomes a supervisor that runs that many server processes
 * (node:cluster) on one port. Each of them is a whole server as `npm start` runs it alone
 * (API, job workers, its pool), over the one database: the embedded PostgreSQL is shared by
 * them and stopped by the last one out; the rate limit, jobs and sessions live in the
 * database, so nothing else is shared.
 *
 * Stops keep the guarantees of a single process: SIGINT or SIGTERM is passed to every server
 * process (a terminal's Ctrl-C reaches them anyway), each finishes its requests and jobs in
 * hand, the last stops the embedded database, and only then does this process exit, 0 when
 * every one of them stopped cleanly. A server process that fails while starting stops the
 * others (the failure is the same for all: a bad database, a busy port); one that dies while
 * serving is replaced.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/** What a server process says to the supervisor once it serves (it listens earlier, while it starts). */
export const SERVING = 'dcs:serving';

export function superviseServers(count: number, logger: Logger): void {
  const exit = (code: number) => logger.flush(() => process.exit(code));
  const serving = new Set<Worker>();
  let stopping = false;
  let failed = false;

  const stopAll = (signal: NodeJS.Signals) => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  const fork = () => {
    const worker = cluster.fork();
    worker.on('message', (message) => {
      if (message === SERVING) serving.add(worker);
    });
    worker.once('exit', (code, signal) => {
      if (serving.delete(worker) && !stopping) {
        logger.error({ pid: worker.process.pid, code, signal }, 'a server process died; starting another');
        return fork();
      }
      if (code !== 0) {
        failed = true;
        // It failed while starting: the others would fail alike.
        if (!stopping) {
          stopping = true;
          stopAll('SIGTERM');
        }
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info(failed ? 'server processes stopped, not all cleanly' : 'stopped');
        exit(failed ? 1 : 0);
      }
    });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) logger.info({ signal, processes: Object.keys(cluster.workers ?? {}).length }, 'stopping: every server process finishes its work in hand');
    stopping = true;
    stopAll(signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  logger.info({ processes: count }, 'starting server processes');
  for (let i = 0; i < count; i++) fork();
}
