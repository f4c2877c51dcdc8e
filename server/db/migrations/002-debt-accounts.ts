import type { Knex } from 'knex';

function tenantColumns(table: Knex.CreateTableBuilder, knex: Knex): void {
  table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
  table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
  table.specificType('environment', 'environment').notNullable();
}

function timestamps(table: Knex.CreateTableBuilder, knex: Knex): void {
  table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TYPE location_type AS ENUM ('original_creditor', 'current_creditor', 'product_type')`);
  await knex.raw(`CREATE TYPE debt_account_status AS ENUM ('active', 'archived', 'closed', 'paid_off')`);

  await knex.schema.createTable('locations', (table) => {
    tenantColumns(table, knex);
    table.string('external_id', 255);
    table.string('name', 255).notNullable();
    table.specificType('type', 'location_type').notNullable().defaultTo('original_creditor');
    table.boolean('card').notNullable().defaultTo(true);
    table.boolean('ach').notNullable().defaultTo(true);
    table.jsonb('rules').notNullable().defaultTo('{}');
    table.jsonb('metadata').notNullable().defaultTo('{}');
    timestamps(table, knex);
    table.unique(['organization_id', 'environment', 'external_id']);
    table.index(['organization_id', 'environment', 'created_at', 'id']);
  });

  await knex.schema.createTable('debt_accounts', (table) => {
    tenantColumns(table, knex);
    // RESTRICT: a customer or location still used by an account cannot go (409).
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('RESTRICT');
    table.uuid('location_id').notNullable().references('locations.id').onDelete('RESTRICT');
    table.uuid('parent_id').references('debt_accounts.id').onDelete('RESTRICT');
    table.string('external_id', 255);
    table.string('external_account_number', 255);
    // NULL: not given, so the Portal shows every option.
    table.specificType('billing_type', 'text[]');
    table.bigInteger('balance').notNullable();
    table.bigInteger('current_balance').notNullable();
    table.specificType('status', 'debt_account_status').notNullable().defaultTo('active');
    table.string('external_status', 255);
    table.jsonb('rules').notNullable().defaultTo('{}');
    table.jsonb('metadata').notNullable().defaultTo('{}');
    timestamps(table, knex);
    table.unique(['organization_id', 'environment', 'external_id']);
    table.index(['organization_id', 'environment', 'created_at', 'id']);
    table.index(['customer_id', 'created_at']);
    table.index(['parent_id']);
    // With the tenant columns, a location's account count is read from the index alone.
    table.index(['location_id', 'organization_id', 'environment']);
  });

  await knex.schema.createTable('debt_account_locations', (table) => {
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('CASCADE');
    table.uuid('location_id').notNullable().references('locations.id').onDelete('RESTRICT');
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['debt_account_id', 'location_id']);
    // With the tenant columns, a location's account count is read from the index alone.
    table.index(['location_id', 'organization_id', 'environment']);
  });

  await knex.schema.createTable('payment_plans', (table) => {
    tenantColumns(table, knex);
    table.uuid('debt_account_id').notNullable().unique().references('debt_accounts.id').onDelete('CASCADE');
    table.string('frequency', 32);
    table.date('start_date');
    table.bigInteger('amount');
    table.string('status', 32).notNullable();
    timestamps(table, knex);
  });

  // Lookup (GET /debt-accounts/lookup): a phone by its last ten digits, names by their first
  // and last words, lowercased; kept by PostgreSQL itself, and indexed per tenant.
  await knex.raw(`
    ALTER TABLE customers
      ADD COLUMN phone_digits text GENERATED ALWAYS AS (right(regexp_replace(coalesce(phone, ''), '\\D', '', 'g'), 10)) STORED,
      ADD COLUMN first_name_lower text GENERATED ALWAYS AS (lower(split_part(btrim(name), ' ', 1))) STORED,
      ADD COLUMN last_name_lower text GENERATED ALWAYS AS (lower(regexp_replace(btrim(name), '^.*\\s', ''))) STORED`);
  await knex.raw('CREATE INDEX customers_lookup_phone ON customers (organization_id, environment, phone_digits)');
  await knex.raw('CREATE INDEX customers_lookup_name ON customers (organization_id, environment, last_name_lower, first_name_lower)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS customers_lookup_name');
  await knex.raw('DROP INDEX IF EXISTS customers_lookup_phone');
  await knex.raw('ALTER TABLE customers DROP COLUMN IF EXISTS phone_digits, DROP COLUMN IF EXISTS first_name_lower, DROP COLUMN IF EXISTS last_name_lower');
  for (const table of ['payment_plans', 'debt_account_locations', 'debt_accounts', 'locations']) await knex.schema.dropTableIfExists(table);
  await knex.raw('DROP TYPE IF EXISTS debt_account_status');
  await knex.raw('DROP TYPE IF EXISTS location_type');
}
