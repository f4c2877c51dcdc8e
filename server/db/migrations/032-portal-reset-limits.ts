import type { Knex } from 'knex';

/**
 * The limits of "Forgot password", kept durably (a logged table: a PostgreSQL crash does not
 * hand out a fresh hour) and shared by every server process: one row per organization,
 * environment and subject (`address:` or `ip:` and a keyed digest, never the address or the
 * IP itself), counting requests in the hour that began at `window_started_at` (the tenant's
 * clock). Rows of an hour that is over are deleted by later requests of the tenant.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_reset_limits', (table) => {
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('subject', 80).notNullable();
    table.timestamp('window_started_at', { useTz: true }).notNullable();
    table.integer('requests').notNullable();
    table.primary(['organization_id', 'environment', 'subject']);
    table.index(['organization_id', 'environment', 'window_started_at'], 'portal_reset_limits_window');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('portal_reset_limits');
}
