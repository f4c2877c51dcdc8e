import { connect } from '../../server/db/database';

/** Drops the template and every database cloned from it in this run, then stops PostgreSQL. */
export default async function globalTeardown(): Promise<void> {
  const adminUrl = process.env.TEST_ADMIN_DATABASE_URL;
  const template = process.env.TEST_TEMPLATE_DATABASE;
  if (adminUrl && template) {
    const admin = connect(adminUrl, 1);
    const { rows } = await admin.raw<{ rows: { datname: string }[] }>(
      `SELECT datname FROM pg_database WHERE datname = ? OR datname LIKE ?`,
      [template, `${template}_%`],
    );
    for (const { datname } of rows) await admin.raw(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.destroy();
  }
  await globalThis.stopTestDatabase?.();
}
