/**
 * Once per `jest` run: a PostgreSQL server (DATABASE_URL, or an embedded one under
 * .data/test), and a template database migrated once. Each test file clones the template
 * (CREATE DATABASE … TEMPLATE), so files run in parallel without touching each other.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect, migrate } from '../../server/db/database';
import { startEmbedded } from '../../server/db/embedded';
import { startQueue } from '../../server/jobs/queue';
import { createLogger } from '../../server/kernel/logging';

declare global {
  // eslint-disable-next-line no-var
  var stopTestDatabase: (() => Promise<void>) | undefined;
}

export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    // A cluster of this run's own: two runs at once (a developer's and a watcher's) must not
    // stop each other's database.
    const dataDir = resolve(__dirname, '../../.data', `test-${process.pid}`);
    const embedded = await startEmbedded(dataDir, () => {});
    adminUrl = embedded.url;
    globalThis.stopTestDatabase = async () => {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const template = `dcs_template_${randomBytes(4).toString('hex')}`;
  const admin = connect(adminUrl, 1);
  await admin.raw(`CREATE DATABASE ${template}`);
  await admin.destroy();

  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  const db = connect(url.toString(), 2);
  await migrate(db);
  await db.destroy();
  // The job queue's schema too, so that each test file's queue starts at once.
  const boss = await startQueue(url.toString(), createLogger('silent'));
  await boss.stop({ graceful: false, wait: true });

  process.env.TEST_ADMIN_DATABASE_URL = adminUrl;
  process.env.TEST_TEMPLATE_DATABASE = template;
}
