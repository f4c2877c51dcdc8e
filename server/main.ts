/**
 * `npm start`: checks the environment and the port, opens the database (DATABASE_URL, waited
 * for while it comes up; or the embedded PostgreSQL under DATA_DIR), migrates, then serves on
 * PORT. SIGTERM or SIGINT: stop accepting, finish the requests in flight, stop the workers and
 * the queue, close the pool, stop the embedded database; a signal during start-up stops after
 * the step in hand. Expected failures (bad environment, busy port, wrong or absent database)
 * are one line on stderr and exit code 1, never a stack.
 *
 * The port is listened on from the first moment (operate/start-gate.ts): /livez and /readyz answer
 * while the database opens and migrates; every other request waits until the service is ready.
 * /readyz answers 503 until then, and again from the first moment of a stop.
 */
// First of all: OpenTelemetry patches express, http, pg, knex, undici and pino as they load.
import './observability/preload';
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { createApp, listen } from './app';
import { loadConfig } from './kernel/config';
import { loadMasterKey, SecretBox } from './crypto/secrets';
import { migrate, openDatabase, STARTUP_LOCKS, underAdvisoryLock, waitForDatabase, type Database } from './db/database';
import { QUEUE_POOL, startQueue, type Boss } from './jobs/queue';
import { connectionBudgetWarning } from './db/connection-budget';
import { startWorkers, type Workers } from './workers';
import { createLogger } from './kernel/logging';
import { superviseServers, SERVING } from './kernel/cluster';
import { portIsFree } from './kernel/net';
import { webhookEvents } from './webhooks/outbox';
import { diskFileStore } from './files/disk-file-store';
import { closeServer } from './http/close-server';
import { within } from './kernel/within';
import { Readiness } from './operate/readiness';
import { startGate, type StartGate } from './operate/start-gate';
import { stopTelemetry } from './observability/telemetry';

class StartInterrupted extends Error {}

interface Running {
  database?: Database;
  boss?: Boss;
  workers?: Workers;
  server?: Server;
  gate?: StartGate;
  /** The whole service answers (the gate opened). */
  serving?: boolean;
}

/**
 * A stop ends within 15 s, requests, jobs and deliveries in flight or not: this much for the
 * server and the jobs, a bounded wait for the pool, and the rest for PostgreSQL's fast shutdown.
 */
const STOP_WITHIN_MS = 10_000;
const POOL_WITHIN_MS = 2_000;
/** Requests in flight get this long to be answered; a connection still open then is cut. */
const REQUESTS_WITHIN_MS = 5_000;

/**
 * Everything started so far, stopped in the reverse order, within STOP_WITHIN_MS: the server
 * and the webhook deliveries in hand first (side by side), then the queue's other jobs (those
 * still running when the time is up are failed, to be retried), then the pool and the embedded
 * PostgreSQL.
 */
async function shutdown(running: Running, graceful: boolean): Promise<void> {
  const deadline = Date.now() + STOP_WITHIN_MS;
  const left = () => Math.max(0, deadline - Date.now());
  await Promise.all([running.server && closeServer(running.server, REQUESTS_WITHIN_MS), within(left(), running.workers?.stop())]);
  await running.boss?.stop({ graceful, wait: true, timeout: left() });
  await running.database?.close(POOL_WITHIN_MS);
  // The spans of the work just finished, sent (at most a second: a collector gone is not waited for).
  await within(1_000, stopTelemetry()).catch(() => {});
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger: Logger = createLogger(config.logLevel);
  const running: Running = {};
  const readiness = new Readiness();
  // pino writes asynchronously: its last lines out, in order, before the process ends.
  const exit = (code: number) => logger.flush(() => process.exit(code));

  // Signals are ours from the first moment: during start-up they end the start after its
  // current step, so nothing (the embedded PostgreSQL above all) is left half-started.
  let requested: string | undefined;
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    readiness.drain();
    logger.info({ signal }, 'stopping: finishing requests in flight');
    stopping = shutdown(running, true).then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'could not stop cleanly');
        exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    // Not ready from this moment, whatever the step in hand.
    readiness.drain();
    if (running.serving) stop(signal);
    else if (!requested) {
      requested = signal;
      logger.info({ signal }, 'stopping once the start-up step in hand ends');
    }
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const checkpoint = () => {
    if (requested) throw new StartInterrupted();
  };

  try {
    // Under a supervisor (cluster.ts) the port was checked once, and is shared by design.
    if (!cluster.isWorker && config.port !== 0 && !(await portIsFree(config.port))) {
      throw new Error(`Port ${config.port} is already in use; set PORT to another one.`);
    }
    running.gate = startGate(readiness);
    running.server = await listen(running.gate.listener, config.port);
    // The port bound: with PORT=0, the one the system chose (the operating tests start so).
    const address = running.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    // At debug: a start that fails says one line, `Could not start: …`, and nothing else.
    logger.debug({ port }, 'starting: /livez and /readyz answer, other requests wait until the service is ready');
    checkpoint();
    running.database = await openDatabase(config, (line) => logger.info(line));
    const database = running.database;
    readiness.databaseOpened(database.knex);
    checkpoint();
    if (config.databaseUrl) {
      await waitForDatabase(database.url, config.databaseWaitSeconds, (attempt, reason) =>
        logger.warn({ attempt }, `waiting for the database (try ${attempt}, at most ${config.databaseWaitSeconds} s): ${reason}`),
      );
      checkpoint();
    }
    await migrate(database.knex);
    checkpoint();
    // One line per start, not one per process (the first of WEB_CONCURRENCY's says it).
    if (!cluster.isWorker || cluster.worker?.id === 1) {
      const warning = await connectionBudgetWarning(database.knex, { processes: config.webConcurrency, pool: config.databasePoolMax, queue: QUEUE_POOL });
      if (warning) logger.warn(warning);
    }
    const secrets = new SecretBox(loadMasterKey(config.dataEncryptionKey, config.dataDir));
    // pg-boss creating its schema and queues in two processes at once deadlocks: one at a time.
    running.boss = await underAdvisoryLock(database.knex, STARTUP_LOCKS.jobQueue, () => startQueue(database.url, logger));
    checkpoint();
    const deps = { config, db: database.knex, logger, secrets, boss: running.boss, clock: () => new Date(), events: webhookEvents(running.boss), files: diskFileStore(config.dataDir) };
    running.workers = await startWorkers(deps);
    readiness.workersReady();
    checkpoint();
    running.gate.open(createApp(deps, { readiness }));
    running.serving = true;
    if (requested) return stop(requested);
    logger.info({ port, database: config.databaseUrl ? 'DATABASE_URL' : 'embedded' }, 'serving /api/v1');
    // Under a supervisor (cluster.ts): this process serves from now on.
    if (cluster.isWorker) process.send?.(SERVING);
  } catch (error) {
    running.gate?.abandon();
    await shutdown(running, false).catch(() => {});
    if (error instanceof StartInterrupted) {
      logger.info('stopped');
      return exit(0);
    }
    throw error;
  }
}

/** WEB_CONCURRENCY > 1: a supervisor over that many server processes, each running main(). */
async function supervise(): Promise<boolean> {
  if (!cluster.isPrimary) return false;
  const config = loadConfig();
  if (config.webConcurrency === 1) return false;
  if (config.port !== 0 && !(await portIsFree(config.port))) {
    throw new Error(`Port ${config.port} is already in use; set PORT to another one.`);
  }
  superviseServers(config.webConcurrency, createLogger(config.logLevel));
  return true;
}

supervise()
  .then((supervising) => (supervising ? undefined : main()))
  .catch((error: Error) => {
    console.error(`Could not start: ${error.message}`);
    process.exit(1);
  });
