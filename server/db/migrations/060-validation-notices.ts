import type { Knex } from 'knex';

/**
 * The validation notice (12 CFR 1006.34). A debt account keeps the itemization its notice
 * prints (one JSON object: the date, its kind, the amounts and which creditor location was the
 * creditor then). Each notice sent is a row of `validation_notices`, kept as the communications
 * log is (no foreign key to the customer or the accounts, nothing deleted: §1006.100): the data it
 * was made from (`data`, enough to render it again), its PDF (by the storage port: `file_key`),
 * how it went (`delivery`, the E-SIGN consent or the §1006.42(c) assertion it relied on) and its
 * row of the log. A letter is a row of the log too: `channel` gains `mail`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('debt_accounts', (table) => {
    table.jsonb('itemization');
  });

  await knex.schema.createTable('validation_notices', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable();
    table.specificType('debt_account_ids', 'uuid[]').notNullable();
    table.uuid('customer_id').notNullable();
    table.string('language', 2).notNullable();
    table.string('delivery', 8).notNullable();
    table.string('to', 320).notNullable();
    table.date('sent_on').notNullable();
    table.date('validation_period_ends_on').notNullable();
    table.bigInteger('amount_due').notNullable();
    table.jsonb('esign_consent');
    table.boolean('procedure_1006_42c').notNullable().defaultTo(false);
    table.uuid('communication_id').notNullable();
    table.uuid('file_key').notNullable();
    table.integer('file_size').notNullable();
    table.string('file_sha256', 64).notNullable();
    table.jsonb('data').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE validation_notices ADD CONSTRAINT validation_notices_language CHECK (language IN ('en', 'es'))`);
  await knex.raw(`ALTER TABLE validation_notices ADD CONSTRAINT validation_notices_delivery CHECK (delivery IN ('email', 'mail'))`);
  await knex.raw('CREATE INDEX validation_notices_accounts ON validation_notices USING gin (debt_account_ids)');
  await knex.raw('CREATE INDEX validation_notices_tenant_account ON validation_notices (organization_id, environment, debt_account_id, created_at DESC)');

  await knex.raw('ALTER TABLE communications DROP CONSTRAINT communications_channel');
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_channel CHECK (channel IN ('email', 'mail'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM communications WHERE channel = 'mail'`);
  await knex.raw('ALTER TABLE communications DROP CONSTRAINT communications_channel');
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_channel CHECK (channel IN ('email'))`);
  await knex.schema.dropTable('validation_notices');
  await knex.schema.alterTable('debt_accounts', (table) => table.dropColumn('itemization'));
}
