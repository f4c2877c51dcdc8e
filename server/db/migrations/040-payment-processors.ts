import type { Knex } from 'knex';

/**
 * Real processors. `payment_processors`: the one processor of an organization and environment
 * (`sandbox`, `stripe`, `authorize_net`), its credentials sealed with the data key (one JSON
 * object, never readable without it) beside the last four characters of each, its calls'
 * rate, and an opaque id that names it in the URL its webhooks are sent to.
 * `processor_customers`: the processor's customer (Stripe's `cus_…`) made for one of ours,
 * per processor configuration, so a second saved method joins the first.
 * `processor_notices`: every processor webhook event applied, by the processor's own id, so a
 * repeat changes nothing. Transactions gain `chargeback` (money a cardholder took back through
 * their bank) and `chargeback_reversal` (a chargeback the agency won: the money is ours again);
 * a charge keeps its chargebacks (`chargebacks`, listed on it).
 */
const KINDS = ['charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'settlement_write_off', 'external', 'external_reversal', 'settlement_write_off_reversal'];
const kinds = (list: string[]) => list.map((kind) => `'${kind}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_processors', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('processor', 16).notNullable();
    table.text('credentials_sealed').notNullable();
    table.jsonb('credentials_last4').notNullable();
    table.integer('rate_limit_per_second').notNullable();
    table.timestamp('configured_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.unique(['organization_id', 'environment']);
  });
  await knex.raw(`ALTER TABLE payment_processors ADD CONSTRAINT payment_processors_processor CHECK (processor IN ('sandbox', 'stripe', 'authorize_net'))`);
  await knex.schema.createTable('processor_customers', (table) => {
    table.uuid('processor_id').notNullable().references('payment_processors.id').onDelete('CASCADE');
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    table.string('processor_customer_id', 64).notNullable();
    table.primary(['processor_id', 'customer_id']);
  });
  await knex.schema.createTable('processor_notices', (table) => {
    table.uuid('processor_id').notNullable().references('payment_processors.id').onDelete('CASCADE');
    table.string('notice_id', 128).notNullable();
    table.string('kind', 32).notNullable();
    table.uuid('charge_id').references('charges.id').onDelete('SET NULL');
    table.timestamp('received_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['processor_id', 'notice_id']);
  });
  await knex.schema.alterTable('charges', (table) => {
    table.jsonb('chargebacks').notNullable().defaultTo('[]');
  });
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN (${kinds([...KINDS, 'chargeback', 'chargeback_reversal'])}))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM transactions WHERE kind IN ('chargeback', 'chargeback_reversal')`);
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN (${kinds(KINDS)}))`);
  await knex.schema.alterTable('charges', (table) => table.dropColumn('chargebacks'));
  await knex.schema.dropTable('processor_notices');
  await knex.schema.dropTable('processor_customers');
  await knex.schema.dropTable('payment_processors');
}
