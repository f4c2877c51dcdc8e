import type { Knex } from 'knex';

const ENVIRONMENTS = ['production', 'sandbox'];

/** organization_id + environment on every tenant row; the repo layer scopes every query by both. */
function tenantColumns(table: Knex.CreateTableBuilder, knex: Knex): void {
  table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
  table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
  table.enu('environment', ENVIRONMENTS, { useNative: true, enumName: 'environment', existingType: true }).notNullable();
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TYPE environment AS ENUM ('production', 'sandbox')`);

  await knex.schema.createTable('organizations', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.string('name', 255).notNullable();
    table.string('notification_email', 255);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('api_tokens', (table) => {
    tenantColumns(table, knex);
    table.string('token_hash', 64).notNullable().unique();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('revoked_at', { useTz: true });
  });

  await knex.schema.createTable('customers', (table) => {
    tenantColumns(table, knex);
    table.string('external_id', 255);
    table.string('name', 255).notNullable();
    table.string('email', 255).notNullable();
    table.string('phone', 64);
    table.date('date_of_birth');
    table.string('ssn_last4', 4);
    table.jsonb('metadata').notNullable().defaultTo('{}');
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.unique(['organization_id', 'environment', 'external_id']);
    table.index(['organization_id', 'environment', 'created_at', 'id']);
  });

  await knex.schema.createTable('customer_addresses', (table) => {
    tenantColumns(table, knex);
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    for (const column of ['name', 'line1', 'line2', 'city', 'state', 'country']) table.string(column, 255);
    table.string('postal_code', 5).notNullable();
    table.boolean('is_primary').notNullable().defaultTo(false);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['customer_id', 'created_at']);
  });
  // At most one primary address per customer, whatever the application does.
  await knex.raw('CREATE UNIQUE INDEX customer_addresses_one_primary ON customer_addresses (customer_id) WHERE is_primary');

  await knex.schema.createTable('payment_methods', (table) => {
    tenantColumns(table, knex);
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    table.enu('type', ['card', 'ach'], { useNative: true, enumName: 'payment_method_type' }).notNullable();
    // Card: never the number or the security code.
    table.string('card_holder', 255);
    table.string('card_last4', 4);
    table.string('card_brand', 16);
    table.smallint('card_exp_month');
    table.smallint('card_exp_year');
    table.string('card_zip', 5);
    table.string('card_fingerprint', 64);
    // ACH: numbers sealed with the data key, plus their masked forms for display.
    table.string('account_holder', 255);
    table.string('account_type', 16);
    table.text('routing_number_sealed');
    table.string('routing_number_masked', 9);
    table.text('account_number_sealed');
    table.string('account_number_masked', 17);
    table.string('account_zip', 5);
    table.string('account_state', 2);
    table.boolean('is_primary').notNullable().defaultTo(false);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['customer_id', 'created_at']);
  });
  await knex.raw('CREATE UNIQUE INDEX payment_methods_one_primary ON payment_methods (customer_id) WHERE is_primary');

  // rate-limiter-flexible's table, made here so that no request waits for it. UNLOGGED: the
  // counts are worth nothing after a crash, and skipping the WAL makes each request's count cheap.
  await knex.raw('CREATE UNLOGGED TABLE rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['rate_limits', 'payment_methods', 'customer_addresses', 'customers', 'api_tokens', 'organizations']) {
    await knex.schema.dropTableIfExists(table);
  }
  await knex.raw('DROP TYPE IF EXISTS payment_method_type');
  await knex.raw('DROP TYPE IF EXISTS environment');
}
