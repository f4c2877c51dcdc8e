import type { Knex } from 'knex';

/**
 * Charges in two steps around the gateway: a charge is first stored `processing` (reserved: it
 * counts against what the account can still be charged) and committed, the gateway is asked
 * with no transaction held, and the answer is recorded in a second transaction. Recovery finds
 * the `processing` charges a crash or a lost answer left behind (index by age).
 *
 * The sandbox simulator's own ledger of requests, keyed by the idempotency key we send: a
 * repeat of a charge, void or refund answers what the first did, and `find(key)` reads it.
 */
const STATUSES = `'pending', 'succeeded', 'failed', 'returned', 'voided', 'refunded', 'partially_refunded', 'scheduled', 'canceled'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_status');
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_status CHECK (status IN (${STATUSES}, 'processing'))`);
  await knex.raw(`CREATE INDEX charges_processing_accounts ON charges (debt_account_id) WHERE status = 'processing'`);
  await knex.raw(`CREATE INDEX charges_processing_age ON charges (updated_at) WHERE status = 'processing'`);

  // The key a refund was sent to the gateway with: the same refund sent twice is recorded once.
  await knex.schema.alterTable('transactions', (table) => table.string('gateway_key', 128));
  await knex.raw(`CREATE UNIQUE INDEX transactions_gateway_key ON transactions (charge_id, gateway_key) WHERE gateway_key IS NOT NULL`);

  await knex.schema.createTable('sandbox_requests', (table) => {
    table.uuid('organization_id').notNullable();
    table.specificType('environment', 'environment').notNullable();
    table.string('idempotency_key', 128).notNullable();
    table.string('kind', 8).notNullable();
    // What the simulator answered (a charge's outcome, or a refusal); null: never received (find() asked first).
    table.jsonb('answer');
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['organization_id', 'environment', 'idempotency_key']);
  });
  await knex.raw(`ALTER TABLE sandbox_requests ADD CONSTRAINT sandbox_requests_kind CHECK (kind IN ('charge', 'void', 'refund'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sandbox_requests');
  await knex.raw('DROP INDEX IF EXISTS transactions_gateway_key');
  await knex.schema.alterTable('transactions', (table) => table.dropColumn('gateway_key'));
  await knex.raw('DROP INDEX IF EXISTS charges_processing_accounts');
  await knex.raw('DROP INDEX IF EXISTS charges_processing_age');
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_status');
  await knex.raw(`UPDATE charges SET status = 'failed', error = 'The charge was never completed.', error_code = 'processing_error' WHERE status = 'processing'`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_status CHECK (status IN (${STATUSES}))`);
}
