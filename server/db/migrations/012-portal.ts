import type { Knex } from 'knex';

/**
 * The Portal in a browser: browser sessions (a cookie whose value is stored only as SHA-256),
 * the verification lock of a customer session, and the customer activity that tracking events
 * report. A guest's browser session names its tenant and, once the guest has been found, the
 * customer and account it may pay.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_browser_sessions', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('token_hash', 64).notNullable().unique({ indexName: 'portal_browser_sessions_token_hash_unique' });
    // NULL for a guest; a browser session opened from a link goes with its customer session.
    table.uuid('customer_session_id').references('customer_sessions.id').onDelete('CASCADE');
    // A guest's, once found; for a link's session, its customer session's.
    table.uuid('customer_id').references('customers.id').onDelete('CASCADE');
    table.uuid('debt_account_id').references('debt_accounts.id').onDelete('CASCADE');
    // The synchronizer token of every form this browser session posts.
    table.string('csrf_token', 64).notNullable();
    table.timestamp('verified_at', { useTz: true });
    table.boolean('plan_offer_closed').notNullable().defaultTo(false);
    // A guest's session ends after a quiet while; a link's follows its customer session.
    table.timestamp('expires_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['customer_session_id']);
  });
  await knex.schema.alterTable('customer_sessions', (table) => {
    // Wrong verification answers in a row, and until when the session is locked after five.
    table.integer('verification_failures').notNullable().defaultTo(0);
    table.timestamp('verification_locked_until', { useTz: true });
  });
  await knex.schema.createTable('portal_activity', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('event', 128).notNullable();
    table.timestamp('occurred_at', { useTz: true }).notNullable();
    table.string('device_id', 255).notNullable();
    // SET NULL: the activity happened even when the records are deleted later.
    table.uuid('customer_id').references('customers.id').onDelete('SET NULL');
    table.uuid('debt_account_id').references('debt_accounts.id').onDelete('SET NULL');
    table.index(['organization_id', 'environment', 'occurred_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('portal_activity');
  await knex.schema.alterTable('customer_sessions', (table) => {
    table.dropColumn('verification_failures');
    table.dropColumn('verification_locked_until');
  });
  await knex.schema.dropTable('portal_browser_sessions');
}
