/**
 * A throwaway database for a benchmark: on the server DATABASE_URL names, or else on an
 * embedded PostgreSQL of its own under .data/; migrated. close() drops it, stops the embedded
 * server and removes its files.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Knex } from 'knex';
import { connect, migrate } from '../server/db/database';
import { startEmbedded } from '../server/db/embedded';

export interface ScratchDatabase {
  name: string;
  url: string;
  db: Knex;
  /** Where the server came from, for the benchmark's first line. */
  source: 'DATABASE_URL' | 'embedded';
  close(): Promise<void>;
}

export async function openScratchDatabase(label: string, poolMax = 10, { preparedStatements = true }: { preparedStatements?: boolean } = {}): Promise<ScratchDatabase> {
  const dataDir = join(resolve(__dirname, '..'), '.data', `${label}-${process.pid}`);
  let adminUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!adminUrl) {
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    const embedded = await startEmbedded(dataDir, () => {});
    adminUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const name = `dcs_bench_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = connect(url.toString(), poolMax, { preparedStatements });
  await migrate(db);
  return {
    name,
    url: url.toString(),
    db,
    source: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded',
    close: async () => {
      await db.destroy();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
      await stopEmbedded();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
