import type { Knex } from 'knex';

/**
 * Webhook payloads tell, for each payment method shown, whether a scheduled charge that has not
 * run yet charges it (`has_active_scheduled_charge`): found by the method among the charges
 * still `scheduled` (a small partial index).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX charges_scheduled_by_method ON charges (payment_method_id) WHERE status = 'scheduled'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS charges_scheduled_by_method');
}
