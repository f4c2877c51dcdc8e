import type { Knex } from 'knex';

/**
 * Portal accounts: a customer's e-mail and password for signing in to the Portal (one per
 * customer, an e-mail once per tenant), the one-use links that confirm the e-mail and reset
 * the password (kept as SHA-256 of a random token), and the sign-in lock. The lock is counted
 * per e-mail as typed, known or not, so a locked address tells nobody whether an account
 * exists; it holds a keyed digest of the address, never the address itself.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_accounts', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    // Lowercased: one address, one account, whatever its case.
    table.string('email', 255).notNullable();
    // `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, so the parameters can be raised later.
    table.string('password_hash', 255).notNullable();
    table.timestamp('confirmed_at', { useTz: true });
    table.timestamp('last_sign_in_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.unique(['customer_id'], { indexName: 'portal_accounts_customer_unique' });
    table.unique(['organization_id', 'environment', 'email'], { indexName: 'portal_accounts_email_unique' });
  });
  await knex.schema.createTable('portal_account_tokens', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('portal_account_id').notNullable().references('portal_accounts.id').onDelete('CASCADE');
    table.string('purpose', 16).notNullable();
    table.string('token_hash', 64).notNullable().unique({ indexName: 'portal_account_tokens_hash_unique' });
    table.timestamp('expires_at', { useTz: true }).notNullable();
    table.timestamp('used_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['portal_account_id']);
  });
  await knex.raw(`ALTER TABLE portal_account_tokens ADD CONSTRAINT portal_account_tokens_purpose CHECK (purpose IN ('confirm', 'reset'))`);
  await knex.schema.createTable('portal_sign_in_locks', (table) => {
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('email_digest', 64).notNullable();
    table.integer('failures').notNullable().defaultTo(0);
    table.timestamp('locked_until', { useTz: true });
    table.primary(['organization_id', 'environment', 'email_digest']);
  });
  await knex.schema.alterTable('portal_browser_sessions', (table) => {
    // Signed in with a Portal account: removing the account ends the browser session.
    table.uuid('portal_account_id').references('portal_accounts.id').onDelete('CASCADE');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('portal_browser_sessions', (table) => {
    table.dropColumn('portal_account_id');
  });
  await knex.schema.dropTable('portal_sign_in_locks');
  await knex.schema.dropTable('portal_account_tokens');
  await knex.schema.dropTable('portal_accounts');
}
