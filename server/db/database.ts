import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Config } from '../config';
import { startEmbedded } from './embedded';
import { migrationSource } from './migrations';

export interface Database {
  knex: Knex;
  url: string;
  /** Closes the pool, then stops the embedded PostgreSQL if this process started it. */
  close(): Promise<void>;
}

// DATE columns stay 'YYYY-MM-DD' strings: a JS Date would shift them by the time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

export function connect(url: string, poolMax = 10): Knex {
  return knex({ client: 'pg', connection: url, pool: { min: 0, max: poolMax } });
}

export async function openDatabase(config: Config, log: (line: string) => void = () => {}): Promise<Database> {
  const embedded = config.databaseUrl ? undefined : await startEmbedded(config.dataDir, log);
  const url = config.databaseUrl ?? embedded!.url;
  const db = connect(url);
  return {
    knex: db,
    url,
    close: async () => {
      await db.destroy();
      await embedded?.stop();
    },
  };
}

/** An arbitrary, fixed key: the session-level advisory lock that serializes migrations. */
const MIGRATION_LOCK = 20_261_121;

/**
 * Brings the schema up to date. Several processes may start at once over one database, even
 * an empty one (where knex's own lock table does not exist yet), so the whole migration runs
 * under a PostgreSQL advisory lock: the others wait for it, then find nothing left to do.
 * Needs a pool of at least two connections: one holds the lock while knex migrates.
 */
export async function migrate(db: Knex): Promise<void> {
  const connection = await db.client.acquireConnection();
  try {
    await connection.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await db.migrate.latest({ migrationSource });
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}
