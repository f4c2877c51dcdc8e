import type { Knex } from 'knex';

/**
 * Regulation F's records: every message to a debtor is a row of `communications`, kept (the
 * service deletes none) and readable after its customer is gone — it keeps the customer's id
 * and the address as sent, with no foreign key to the customer or the account (12 CFR
 * 1006.100 asks for three years). A due item's reminder is keyed (tenant, `dedupe_key`), so
 * two processes or a sandbox clock racing over one item record it once.
 *
 * Also: each tenant's organization settings (one JSON object, each key with its default in
 * code), and on the customer their time zone and e-mail preference (opt-out).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('organization_settings', (table) => {
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    // Only the keys an organization has set; the others read as their defaults.
    table.jsonb('settings').notNullable().defaultTo('{}');
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['organization_id', 'environment']);
  });

  await knex.schema.alterTable('customers', (table) => {
    table.string('time_zone', 64);
    table.string('email_preference', 16).notNullable().defaultTo('allowed');
    table.timestamp('email_preference_changed_at', { useTz: true });
    table.string('email_preference_changed_by', 16);
  });
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_email_preference CHECK (email_preference IN ('allowed', 'opted_out'))`);
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_email_preference_changed_by CHECK (email_preference_changed_by IS NULL OR email_preference_changed_by IN ('api', 'link', 'portal'))`);

  await knex.schema.createTable('communications', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // No cascade: the records stay as long as the organization does.
    table.uuid('organization_id').notNullable().references('organizations.id');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('customer_id').notNullable();
    table.uuid('debt_account_id');
    table.string('channel', 8).notNullable().defaultTo('email');
    table.string('kind', 32).notNullable();
    table.string('to', 320).notNullable();
    table.string('subject', 255).notNullable();
    table.text('text').notNullable();
    table.string('status', 16).notNullable();
    table.string('reason', 32);
    table.timestamp('held_until', { useTz: true });
    table.timestamp('sent_at', { useTz: true });
    // The link of RFC 8058's List-Unsubscribe header (also in the text).
    table.text('opt_out_url');
    table.string('dedupe_key', 128);
    table.string('error', 255);
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
    table.unique(['organization_id', 'environment', 'dedupe_key'], { indexName: 'communications_dedupe_key_unique' });
  });
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_status CHECK (status IN ('queued', 'held', 'sent', 'suppressed', 'failed'))`);
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_channel CHECK (channel IN ('email'))`);
  await knex.raw('CREATE INDEX communications_tenant_created ON communications (organization_id, environment, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX communications_customer ON communications (organization_id, environment, customer_id, created_at DESC)');
  // The scheduler's query: held messages by the time they may leave.
  await knex.raw(`CREATE INDEX communications_held ON communications (held_until) WHERE status = 'held'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('communications');
  await knex.raw('ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_email_preference_changed_by');
  await knex.raw('ALTER TABLE customers DROP CONSTRAINT IF EXISTS customers_email_preference');
  await knex.schema.alterTable('customers', (table) => {
    table.dropColumns('time_zone', 'email_preference', 'email_preference_changed_at', 'email_preference_changed_by');
  });
  await knex.schema.dropTableIfExists('organization_settings');
}
