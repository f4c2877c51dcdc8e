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

export async function migrate(db: Knex): Promise<void> {
  await db.migrate.latest({ migrationSource });
}
