import type { Knex } from 'knex';

/**
 * External charges: money that reached the agency outside our gateway (a cheque, cash, a card
 * terminal), recorded so the balance falls. Their money movements are rows of `transactions`
 * like a charge's, so a transaction now names either a charge or an external charge, never
 * both; one `external` and at most one `external_reversal` per external charge and account is
 * held by a unique index, so a reversal cannot be recorded twice.
 *
 * Autopay: one row per debt account that pays itself on a day of each month, and one row per
 * account and month that autopay ran (the key of exactly once: two processes racing over one
 * due month cannot both charge it, and a stopped and restarted autopay does not charge a month
 * twice).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('external_charges', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('RESTRICT');
    table.uuid('customer_id').notNullable();
    table.bigInteger('amount').notNullable();
    table.date('paid_at').notNullable();
    table.string('method', 16).notNullable();
    table.string('reference', 255);
    table.string('note', 1000);
    table.string('status', 16).notNullable().defaultTo('recorded');
    table.timestamp('reversed_at', { useTz: true });
    table.string('reversal_reason', 255);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['organization_id', 'environment', 'created_at', 'id']);
    table.index(['debt_account_id']);
  });
  await knex.raw(`ALTER TABLE external_charges ADD CONSTRAINT external_charges_amount CHECK (amount > 0)`);
  await knex.raw(`ALTER TABLE external_charges ADD CONSTRAINT external_charges_method CHECK (method IN ('check', 'cash', 'money_order', 'card_terminal', 'bank_transfer', 'other'))`);
  await knex.raw(`ALTER TABLE external_charges ADD CONSTRAINT external_charges_status CHECK (status IN ('recorded', 'reversed') AND ((status = 'reversed') = (reversed_at IS NOT NULL)))`);

  await knex.raw('ALTER TABLE transactions ALTER COLUMN charge_id DROP NOT NULL');
  await knex.schema.alterTable('transactions', (table) => {
    table.uuid('external_charge_id').references('external_charges.id').onDelete('RESTRICT');
    table.index(['external_charge_id']);
  });
  await knex.raw('ALTER TABLE transactions ADD CONSTRAINT transactions_one_origin CHECK (num_nonnulls(charge_id, external_charge_id) = 1)');
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  // Widening a varchar changes only the catalog, not the rows.
  await knex.raw('ALTER TABLE transactions ALTER COLUMN kind TYPE varchar(24)');
  await knex.raw(
    `ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN ('charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'settlement_write_off', 'external', 'external_reversal'))`,
  );
  await knex.raw(`CREATE UNIQUE INDEX transactions_one_per_external_kind ON transactions (external_charge_id, kind, debt_account_id) WHERE external_charge_id IS NOT NULL`);

  await knex.schema.createTable('autopays', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable().unique().references('debt_accounts.id').onDelete('CASCADE');
    table.uuid('customer_id').notNullable();
    table.uuid('payment_method_id').references('payment_methods.id').onDelete('SET NULL');
    table.string('amount_type', 16).notNullable();
    table.bigInteger('amount');
    table.smallint('day_of_month').notNullable();
    // The next run, on the tenant's clock: the day of month at the run hour.
    table.timestamp('next_run_at', { useTz: true }).notNullable();
    table.timestamp('last_run_at', { useTz: true });
    table.string('last_outcome', 16);
    table.string('last_error', 255);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE autopays ADD CONSTRAINT autopays_amount CHECK ((amount_type = 'full_balance' AND amount IS NULL) OR (amount_type = 'custom' AND amount > 0))`);
  await knex.raw('ALTER TABLE autopays ADD CONSTRAINT autopays_day CHECK (day_of_month BETWEEN 1 AND 28)');
  await knex.raw('CREATE INDEX autopays_due ON autopays (next_run_at)');

  await knex.schema.createTable('autopay_runs', (table) => {
    // No foreign key to autopays: a month once run stays run when autopay is stopped and started again.
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('CASCADE');
    table.string('month', 7).notNullable();
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('outcome', 16).notNullable();
    table.uuid('charge_id').references('charges.id').onDelete('SET NULL');
    table.string('reason', 255);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.primary(['debt_account_id', 'month']);
  });
  await knex.raw(`ALTER TABLE autopay_runs ADD CONSTRAINT autopay_runs_outcome CHECK (outcome IN ('charged', 'failed', 'skipped'))`);
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_source');
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_source CHECK (source IN ('api', 'payment_plan', 'settlement_offer', 'autopay'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_source');
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_source CHECK (source IN ('api', 'payment_plan', 'settlement_offer'))`);
  await knex.schema.dropTableIfExists('autopay_runs');
  await knex.schema.dropTableIfExists('autopays');
  await knex.raw('DROP INDEX IF EXISTS transactions_one_per_external_kind');
  await knex.raw(`DELETE FROM transactions WHERE external_charge_id IS NOT NULL`);
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN ('charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'settlement_write_off'))`);
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_one_origin');
  await knex.schema.alterTable('transactions', (table) => table.dropColumn('external_charge_id'));
  await knex.raw('ALTER TABLE transactions ALTER COLUMN charge_id SET NOT NULL');
  await knex.schema.dropTableIfExists('external_charges');
}
