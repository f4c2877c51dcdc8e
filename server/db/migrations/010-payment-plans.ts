import type { Knex } from 'knex';

/**
 * Payment plans that run: the plan's enrolment (payment method, balance at enrolment, times),
 * its instalments, one row per attempt to charge an instalment, and each organization's
 * sandbox clock.
 *
 * The rules the scheduler's "exactly once" relies on are enforced here, not only in code: an
 * instalment attempt is a row keyed (instalment, attempt), so two processes racing over the
 * same due instalment cannot both record attempt N; and one open plan per account.
 */
const OPEN = `('pending_configuration', 'pending_enrollment', 'active')`;

export async function up(knex: Knex): Promise<void> {
  // One open plan per account; a canceled, completed or defaulted plan stays readable beside a new one.
  await knex.raw('ALTER TABLE payment_plans DROP CONSTRAINT payment_plans_debt_account_id_unique');
  await knex.raw(`CREATE UNIQUE INDEX payment_plans_one_open_per_account ON payment_plans (debt_account_id) WHERE status IN ${OPEN}`);
  await knex.raw('CREATE INDEX payment_plans_debt_account ON payment_plans (debt_account_id, created_at)');
  await knex.raw('CREATE INDEX payment_plans_tenant_created ON payment_plans (organization_id, environment, created_at, id)');
  await knex.schema.alterTable('payment_plans', (table) => {
    table.uuid('payment_method_id').references('payment_methods.id').onDelete('SET NULL');
    // The account's current balance when the plan was enrolled: what the schedule covers.
    table.bigInteger('balance_at_enrollment');
    table.timestamp('enrolled_at', { useTz: true });
    table.timestamp('canceled_at', { useTz: true });
    table.timestamp('ended_at', { useTz: true });
    // Failed attempts since the last success: at the document's limit the plan defaults.
    table.smallint('consecutive_failures').notNullable().defaultTo(0);
    table.string('source', 16).notNullable().defaultTo('api');
  });
  await knex.raw(
    `ALTER TABLE payment_plans ADD CONSTRAINT payment_plans_status CHECK (status IN ('pending_configuration', 'pending_enrollment', 'active', 'completed', 'canceled', 'defaulted'))`,
  );
  await knex.raw(`ALTER TABLE payment_plans ADD CONSTRAINT payment_plans_frequency CHECK (frequency IS NULL OR frequency IN ('weekly', 'every_other_week', 'monthly', 'last_of_month'))`);

  await knex.schema.createTable('payment_plan_charges', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('payment_plan_id').notNullable().references('payment_plans.id').onDelete('CASCADE');
    // Position in the plan, kept across recomputations: a replaced instalment keeps its number.
    table.integer('seq').notNullable();
    table.date('charge_date').notNullable();
    table.bigInteger('amount').notNullable();
    table.string('status', 16).notNullable().defaultTo('pending');
    table.smallint('attempts').notNullable().defaultTo(0);
    // When the next attempt is due (the charge date's run hour, or a retry's); null once settled.
    table.timestamp('due_at', { useTz: true });
    table.timestamp('successfully_charged_at', { useTz: true });
    table.uuid('charge_id');
    table.string('error', 255);
    table.string('error_code', 32);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.unique(['payment_plan_id', 'seq']);
  });
  await knex.raw(`ALTER TABLE payment_plan_charges ADD CONSTRAINT payment_plan_charges_status CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled'))`);
  await knex.raw('ALTER TABLE payment_plan_charges ADD CONSTRAINT payment_plan_charges_amount CHECK (amount > 0 AND attempts >= 0)');
  // The scheduler's query: pending instalments by due time.
  await knex.raw(`CREATE INDEX payment_plan_charges_due ON payment_plan_charges (due_at) WHERE status = 'pending'`);

  await knex.schema.createTable('payment_plan_charge_attempts', (table) => {
    table.uuid('payment_plan_charge_id').notNullable().references('payment_plan_charges.id').onDelete('CASCADE');
    table.smallint('attempt').notNullable();
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('charge_id');
    table.string('outcome', 16).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // The key of exactly once: attempt N of an instalment is recorded by one process only.
    table.primary(['payment_plan_charge_id', 'attempt']);
  });

  // An instalment's charge: made through the payments service, naming its plan and instalment.
  await knex.schema.alterTable('charges', (table) => {
    table.uuid('payment_plan_id').references('payment_plans.id').onDelete('SET NULL');
    table.uuid('payment_plan_charge_id').references('payment_plan_charges.id').onDelete('SET NULL');
    table.index(['payment_plan_charge_id']);
  });
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_source CHECK (source IN ('api', 'payment_plan'))`);
  await knex.raw('ALTER TABLE payment_plan_charges ADD CONSTRAINT payment_plan_charges_charge FOREIGN KEY (charge_id) REFERENCES charges(id) ON DELETE SET NULL');
  await knex.raw('ALTER TABLE payment_plan_charge_attempts ADD CONSTRAINT payment_plan_charge_attempts_charge FOREIGN KEY (charge_id) REFERENCES charges(id) ON DELETE SET NULL');

  await knex.schema.createTable('sandbox_clocks', (table) => {
    table.uuid('organization_id').primary().references('organizations.id').onDelete('CASCADE');
    // The sandbox clock runs at real speed, this far ahead of real time.
    table.bigInteger('offset_ms').notNullable().defaultTo(0);
    table.string('status', 16).notNullable().defaultTo('ready');
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`ALTER TABLE sandbox_clocks ADD CONSTRAINT sandbox_clocks_status CHECK (status IN ('ready', 'advancing'))`);
  await knex.raw('ALTER TABLE sandbox_clocks ADD CONSTRAINT sandbox_clocks_forward CHECK (offset_ms >= 0)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('sandbox_clocks');
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_source, DROP COLUMN IF EXISTS payment_plan_id, DROP COLUMN IF EXISTS payment_plan_charge_id');
  await knex.schema.dropTableIfExists('payment_plan_charge_attempts');
  await knex.schema.dropTableIfExists('payment_plan_charges');
  await knex.raw('ALTER TABLE payment_plans DROP CONSTRAINT IF EXISTS payment_plans_status, DROP CONSTRAINT IF EXISTS payment_plans_frequency');
  await knex.schema.alterTable('payment_plans', (table) => {
    for (const column of ['payment_method_id', 'balance_at_enrollment', 'enrolled_at', 'canceled_at', 'ended_at', 'consecutive_failures', 'source']) table.dropColumn(column);
  });
  await knex.raw('DROP INDEX IF EXISTS payment_plans_tenant_created');
  await knex.raw('DROP INDEX IF EXISTS payment_plans_debt_account');
  await knex.raw('DROP INDEX IF EXISTS payment_plans_one_open_per_account');
  await knex.raw('ALTER TABLE payment_plans ADD CONSTRAINT payment_plans_debt_account_id_unique UNIQUE (debt_account_id)');
}
