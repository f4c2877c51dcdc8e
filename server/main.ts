/**
 * `npm start`: opens the database (DATABASE_URL, or the embedded PostgreSQL under .data/),
 * migrates, then serves on PORT. SIGTERM or SIGINT: stop accepting, finish the requests in
 * flight, close the pool, stop the embedded database.
 */
import { createApp, listen } from './app';
import { loadConfig } from './config';
import { loadMasterKey, SecretBox } from './crypto/secrets';
import { migrate, openDatabase } from './db/database';
import { startQueue, type Boss } from './jobs/queue';
import { startWorkers, type Workers } from './workers';
import { createLogger } from './logging';
import { webhookEvents } from './webhooks/outbox';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config, (line) => logger.debug({ postgres: line.trim() }, 'postgres'));
  let boss: Boss | undefined;
  let workers: Workers | undefined;
  try {
    await migrate(database.knex);
    const secrets = new SecretBox(loadMasterKey(config.dataEncryptionKey, config.dataDir));
    boss = await startQueue(database.url, logger);
    const queue = boss;
    const deps = { config, db: database.knex, logger, secrets, boss, clock: () => new Date(), events: webhookEvents(boss) };
    workers = await startWorkers(deps);
    const running = workers;
    const app = createApp(deps);
    const server = await listen(app, config.port);
    logger.info({ port: config.port, database: config.databaseUrl ? 'DATABASE_URL' : 'embedded' }, 'serving /api/v1');

    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping: finishing requests in flight');
      server.close(() => {
        // Jobs in hand are finished (or left to be retried by another process), then the pool closes.
        running
          .stop()
          .then(() => queue.stop({ graceful: true, wait: true, timeout: 30_000 }))
          .then(() => database.close())
          .then(() => process.exit(0))
          .catch((error: unknown) => {
            logger.error({ err: error }, 'could not close the database');
            process.exit(1);
          });
      });
      server.closeIdleConnections();
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  } catch (error) {
    await workers?.stop();
    await boss?.stop({ graceful: false, wait: true });
    await database.close();
    throw error;
  }
}

main().catch((error: Error) => {
  console.error(`Could not start: ${error.message}`);
  process.exit(1);
});
