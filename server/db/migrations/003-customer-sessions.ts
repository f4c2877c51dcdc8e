import type { Knex } from 'knex';

export const SESSION_DESTINATIONS = ['accounts_list', 'account_checkout', 'account_detail', 'account_documents', 'account_disputes_detail'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customer_sessions', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    // CASCADE on both: a link into a deleted customer's or account's pages means nothing; the
    // session goes with them and its links answer 404. (SET NULL would silently turn an
    // account link into a customer one, with a destination that no longer fits.)
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    table.uuid('debt_account_id').references('debt_accounts.id').onDelete('CASCADE');
    // Not a foreign key: this API has no dispute resource; the Portal checks it.
    table.uuid('debt_account_dispute_id');
    table.enu('destination', SESSION_DESTINATIONS, { useNative: true, enumName: 'session_destination' }).notNullable();
    // [{name, value}] in request order: the query of portal_url is rebuilt from it.
    table.jsonb('tags').notNullable().defaultTo('[]');
    table.string('return_url', 2048);
    table.string('expiration_return_url', 2048);
    table.boolean('verification').notNullable().defaultTo(false);
    // The token only as SHA-256 (to find the session) and sealed with the data key (so that a
    // short link can rebuild portal_url); never in clear.
    table.string('token_hash', 64).notNullable().unique({ indexName: 'customer_sessions_token_hash_unique' });
    table.text('token_sealed').notNullable();
    table.string('short_code', 32).unique({ indexName: 'customer_sessions_short_code_unique' });
    table.integer('valid_until_hours');
    table.boolean('is_valid_forever').notNullable().defaultTo(false);
    // NULL: valid forever. Otherwise the session has expired once now >= expires_at.
    table.timestamp('expires_at', { useTz: true });
    table.timestamp('last_used_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['organization_id', 'environment', 'created_at', 'id']);
    table.index(['customer_id']);
    table.index(['debt_account_id']);
  });
  await knex.raw(`
    ALTER TABLE customer_sessions
      ADD CONSTRAINT customer_sessions_valid_until_hours CHECK (valid_until_hours BETWEEN 1 AND 2160),
      ADD CONSTRAINT customer_sessions_lifetime CHECK (
        (is_valid_forever AND valid_until_hours IS NULL AND expires_at IS NULL) OR (NOT is_valid_forever AND expires_at IS NOT NULL)),
      ADD CONSTRAINT customer_sessions_one_target CHECK (debt_account_id IS NULL OR debt_account_dispute_id IS NULL)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('customer_sessions');
  await knex.raw('DROP TYPE IF EXISTS session_destination');
}
