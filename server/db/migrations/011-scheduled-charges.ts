import type { Knex } from 'knex';

/**
 * Scheduled charges: a charge row in status `scheduled` with the date it is for and the time it
 * falls due (the date's run hour on its tenant's clock), carried out by the due-work job; the
 * time an ACH debit is to be asked for its outcome (on its tenant's clock, so that moving a
 * sandbox clock settles it); and one row per carried-out scheduled charge, keyed by the charge:
 * two processes racing over the same due charge cannot both record it.
 */
const STATUSES = `'pending', 'succeeded', 'failed', 'returned', 'voided', 'refunded', 'partially_refunded'`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('charges', (table) => {
    table.date('scheduled_at');
    table.timestamp('due_at', { useTz: true });
    // When a scheduled charge was carried out (or canceled by the scheduler), on its tenant's clock.
    table.timestamp('charged_at', { useTz: true });
    table.timestamp('settles_at', { useTz: true });
  });
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_status');
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_status CHECK (status IN (${STATUSES}, 'scheduled', 'canceled'))`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_scheduled CHECK (status <> 'scheduled' OR (scheduled_at IS NOT NULL AND due_at IS NOT NULL))`);
  // The due-work query: scheduled charges by due time; a sandbox's pending ACH debits by settle time.
  await knex.raw(`CREATE INDEX charges_due ON charges (due_at) WHERE status = 'scheduled'`);
  await knex.raw(`CREATE INDEX charges_settles ON charges (organization_id, environment, settles_at) WHERE status = 'pending'`);

  await knex.schema.createTable('scheduled_charge_runs', (table) => {
    // The key of exactly once: a scheduled charge is carried out by one process only.
    table.uuid('charge_id').primary().references('charges.id').onDelete('CASCADE');
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('outcome', 16).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('scheduled_charge_runs');
  await knex.raw('DROP INDEX IF EXISTS charges_settles');
  await knex.raw('DROP INDEX IF EXISTS charges_due');
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_scheduled, DROP CONSTRAINT IF EXISTS charges_status');
  await knex.raw(`DELETE FROM charges WHERE status IN ('scheduled', 'canceled')`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_status CHECK (status IN (${STATUSES}))`);
  await knex.raw('ALTER TABLE charges DROP COLUMN scheduled_at, DROP COLUMN due_at, DROP COLUMN charged_at, DROP COLUMN settles_at');
}
