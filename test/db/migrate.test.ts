import { migrationSource } from '../../server/db/migrations';
import { randomBytes } from 'node:crypto';
import { connect, migrate } from '../../server/db/database';

describe('migrate', () => {
  test('three processes starting at once over one empty database all come up, and the schema is made once', async () => {
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL!;
    const name = `${process.env.TEST_TEMPLATE_DATABASE}_empty_${randomBytes(3).toString('hex')}`;
    const admin = connect(adminUrl, 1);
    await admin.raw(`CREATE DATABASE "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const pools = [connect(url.toString(), 2), connect(url.toString(), 2), connect(url.toString(), 2)];
    try {
      await Promise.all(pools.map((db) => migrate(db)));
      const applied = await pools[0]!('knex_migrations').select('name');
      // Each migration of the list applied once, in order.
      const listed = await migrationSource.getMigrations([]);
      expect(listed).toEqual(['001-initial', '002-debt-accounts', '003-customer-sessions', '004-bulk', '005-webhooks', '007-payments', '008-location-counter', '009-outbox-retention', '010-payment-plans', '011-scheduled-charges', '012-portal', '013-idempotency-scope', '015-webhook-trust', '016-communications', '017-charge-steps', '018-disputes', '019-settlement-offers', '020-documents-tickets', '021-portal-logins', '022-autopay-and-external-charges', '023-portal-checkout-charges', '024-dispute-records-kept', '025-settlement-reversals', '026-webhook-lanes-compact-events', '027-autopay-runs-in-flight', '029-payload-read-indexes', '032-portal-reset-limits', '040-payment-processors', '055-processor-paces', '060-validation-notices', '065-email-addresses', '085-disputes-follow-accounts']);
      expect(applied.map((row: { name: string }) => row.name)).toEqual(listed);
      const { rows } = await pools[0]!.raw(`SELECT to_regclass('public.customers') AS customers`);
      expect(rows[0].customers).toBe('customers');
    } finally {
      await Promise.all(pools.map((db) => db.destroy()));
      await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    }
  });
});
