import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../kernel/config';
import { startEmbedded } from './embedded';
import { migrationSource } from './migrations';
import { within } from '../kernel/within';
import { installPreparedStatements } from './prepared-statements';
import { parseTimestamptz } from './timestamps';

export interface Database {
  knex: Knex;
  url: string;
  /**
   * Closes the pool (waiting for the connections in use at most `poolWithinMs`), then stops the
   * embedded PostgreSQL if this process started it.
   */
  close(poolWithinMs?: number): Promise<void>;
}

// DATE columns stay 'YYYY-MM-DD' strings: a JS Date would shift them by the time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);
// timestamptz columns: the driver's Dates, made faster (timestamps.ts).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

/**
 * A pool on `url`; its statements named (prepared-statements.ts) unless `preparedStatements` is
 * false. Its connections go to statements in the order asked: no work goes first (a priority for
 * reads over the API's charges, kept in front of the pool with AsyncLocalStorage, was measured
 * and taken out: the charges ran slower and the reads no better).
 */
export function connect(url: string, poolMax = 10, { preparedStatements = true }: { preparedStatements?: boolean } = {}): Knex {
  if (preparedStatements) installPreparedStatements();
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: poolMax }, preparedStatements } as Knex.Config);
  return db;
}

export async function openDatabase(config: Config, log: (line: string) => void = () => {}): Promise<Database> {
  const embedded = config.databaseUrl ? undefined : await startEmbedded(config.dataDir, log);
  const url = config.databaseUrl ?? embedded!.url;
  const db = connect(url, config.databasePoolMax, { preparedStatements: config.databasePreparedStatements });
  return {
    knex: db,
    url,
    close: async (poolWithinMs = Infinity) => {
      await within(poolWithinMs, db.destroy());
      await embedded?.stop();
    },
  };
}

/** Failures that a database still starting (or a network still coming up) gives. */
const TRANSIENT = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', '57P03']);

export class DatabaseUnavailable extends Error {}

/**
 * Resolves once the database answers `select 1`. A database that is not up yet (refused, not
 * resolvable, starting up) is tried again every second for `seconds`, with `onRetry` told of
 * each try; a wrong one (no such database, bad password) fails at once. Either failure is a
 * DatabaseUnavailable whose message is one clear line.
 */
export async function waitForDatabase(url: string, seconds: number, onRetry: (attempt: number, reason: string) => void): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      const { code, message } = error as { code?: string; message: string };
      const reason = message || code || 'no answer';
      const transient = TRANSIENT.has(code ?? '') || /timeout/i.test(message);
      if (!transient) throw new DatabaseUnavailable(`the database refused the connection: ${reason}`);
      if (Date.now() >= deadline) throw new DatabaseUnavailable(`the database did not answer within ${seconds} s: ${reason}`);
      onRetry(attempt, reason);
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((done) => setTimeout(done, 1000));
  }
}

/** Arbitrary, fixed keys of the session-level advisory locks taken at start. */
export const STARTUP_LOCKS = { migrations: 20_261_121, jobQueue: 20_261_122 } as const;

/**
 * Runs `work` holding a PostgreSQL advisory lock on a connection of its own: several processes
 * starting at once over one database (even an empty one) take their turns. The pool needs a
 * second connection for `work` itself.
 */
export async function underAdvisoryLock<T>(db: Knex, key: number, work: () => Promise<T>): Promise<T> {
  const connection = await db.client.acquireConnection();
  try {
    await connection.query('SELECT pg_advisory_lock($1)', [key]);
    try {
      return await work();
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [key]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/**
 * Brings the schema up to date, one process at a time (knex's own lock table does not exist
 * yet in an empty database): the others wait, then find nothing left to do.
 */
export async function migrate(db: Knex): Promise<void> {
  await underAdvisoryLock(db, STARTUP_LOCKS.migrations, () => db.migrate.latest({ migrationSource }));
}
