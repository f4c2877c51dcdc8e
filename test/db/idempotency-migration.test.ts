/**
 * Migration 013 over a database that already holds idempotency records and charges with keys:
 * the records (unkeyed digests of bodies with card numbers, answers in the clear) are gone,
 * and each charge keeps its key under the scope it was most likely made in.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { connect } from '../../server/db/database';
import { migrationSource } from '../../server/db/migrations';
import { hashToken } from '../../server/crypto/secrets';

const before013: Knex.MigrationSource<string> = {
  getMigrations: async () => (await migrationSource.getMigrations([])).filter((name) => name < '013'),
  getMigrationName: (name) => name,
  getMigration: (name) => migrationSource.getMigration(name),
};

let admin: Knex;
let db: Knex;
let name: string;

beforeAll(async () => {
  admin = connect(process.env.TEST_ADMIN_DATABASE_URL!, 1);
  name = `${process.env.TEST_TEMPLATE_DATABASE}_m013_${randomBytes(3).toString('hex')}`;
  await admin.raw(`CREATE DATABASE "${name}"`);
  const url = new URL(process.env.TEST_ADMIN_DATABASE_URL!);
  url.pathname = `/${name}`;
  db = connect(url.toString(), 2);
  await db.migrate.latest({ migrationSource: before013 });
});

afterAll(async () => {
  await db?.destroy();
  await admin?.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin?.destroy();
});

test('records kept before are deleted; charges keep their keys, scoped to the API token or to the Portal form’s browser session', async () => {
  const [organization] = await db('organizations').insert({ name: 'Acme Recovery LLC' }).returning('id');
  const org = organization.id as string;
  const tenant = { organization_id: org, environment: 'sandbox' };
  await db('api_tokens').insert({ ...tenant, token_hash: hashToken('old'), revoked_at: db.fn.now() });
  const [live] = await db('api_tokens').insert({ ...tenant, token_hash: hashToken('live') }).returning('id');
  const [customer] = await db('customers').insert({ ...tenant, name: 'Maria Gonzalez', email: 'maria@mail.example' }).returning('id');
  const [location] = await db('locations').insert({ ...tenant, name: 'Lakeside Medical Center' }).returning('id');
  const [account] = await db('debt_accounts').insert({ ...tenant, customer_id: customer.id, location_id: location.id, balance: 1000, current_balance: 1000 }).returning('id');
  const browserId = randomUUID();
  const charge = (key: string | null, reference: string) => ({
    ...tenant,
    reference_number: reference,
    debt_account_id: account.id,
    customer_id: customer.id,
    payment_method_type: 'card',
    gateway: 'sandbox',
    status: 'succeeded',
    amount: 100,
    idempotency_key: key,
  });
  await db('charges').insert([charge('order-1001', 'CH-AAAAAAAAAA'), charge(`portal-${browserId}-${'a'.repeat(32)}`, 'CH-BBBBBBBBBB'), charge(null, 'CH-CCCCCCCCCC')]);
  await db('idempotency_keys').insert({
    ...tenant,
    key: 'order-1001',
    method: 'POST',
    path: '/api/v1/charges',
    request_hash: 'a'.repeat(64),
    status: 'done',
    response_status: 201,
    response_body: JSON.stringify({ data: {} }),
    created_at: db.fn.now(),
    expires_at: db.raw(`now() + interval '1 day'`),
  });

  await db.migrate.latest({ migrationSource });

  expect(await db('idempotency_keys').select()).toEqual([]);
  const scopes = await db('charges').orderBy('reference_number').select('idempotency_key', 'idempotency_scope', 'idempotency_fingerprint');
  expect(scopes).toEqual([
    { idempotency_key: 'order-1001', idempotency_scope: `token:${live.id} POST /api/v1/charges`, idempotency_fingerprint: null },
    { idempotency_key: `portal-${browserId}-${'a'.repeat(32)}`, idempotency_scope: `portal:${customer.id}:${browserId} POST /accounts/${account.id}/pay`, idempotency_fingerprint: null },
    { idempotency_key: null, idempotency_scope: null, idempotency_fingerprint: null },
  ]);
  // One key per scope now: the same key under another scope is another charge's.
  await db('charges').insert({ ...charge('order-1001', 'CH-DDDDDDDDDD'), idempotency_scope: 'token:other POST /api/v1/charges' });
  await expect(db('charges').insert({ ...charge('order-1001', 'CH-EEEEEEEEEE'), idempotency_scope: `token:${live.id} POST /api/v1/charges` })).rejects.toMatchObject({
    constraint: 'charges_idempotency_scope_key_unique',
  });
});
