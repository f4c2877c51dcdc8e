/**
 * A throwaway database for a benchmark: on the server DATABASE_URL names, or else on an
 * embedded PostgreSQL of its own under .data/; migrated. close() drops it, stops the embedded
 * server and removes its files. With `keep`, the database (and the embedded server's files,
 * under .data/<keep>) outlive the run: the next run with the same `keep` opens the same
 * database, migrated to the current code, so a benchmark that seeds for minutes seeds once.
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
  /** With `keep`: whether the database existed before this run (its rows are the last run's). */
  reused: boolean;
  close(): Promise<void>;
}

export async function openScratchDatabase(
  label: string,
  poolMax = 10,
  { preparedStatements = true, keep }: { preparedStatements?: boolean; keep?: string } = {},
): Promise<ScratchDatabase> {
  const dataDir = join(resolve(__dirname, '..'), '.data', keep ?? `${label}-${process.pid}`);
  let adminUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!adminUrl) {
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    const embedded = await startEmbedded(dataDir, () => {});
    adminUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const name = keep ? `dcs_kept_${keep.replace(/\W/g, '_')}` : `dcs_bench_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  const reused = keep ? (await admin.raw<{ rows: unknown[] }>('SELECT 1 FROM pg_database WHERE datname = ?', [name])).rows.length > 0 : false;
  if (!reused) await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = connect(url.toString(), poolMax, { preparedStatements });
  await migrate(db);
  return {
    name,
    url: url.toString(),
    db,
    source: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded',
    reused,
    close: async () => {
      await db.destroy();
      if (keep) {
        await admin.destroy();
        await stopEmbedded();
        return;
      }
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
      await stopEmbedded();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
