import type { Knex } from 'knex';

/**
 * What webhook payloads read, by index: whether a scheduled charge that has not run yet charges
 * a payment method (`has_active_scheduled_charge`, among the charges still `scheduled`: a small
 * partial index), and an account's settlement offers (whether it has any, and its latest).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX charges_scheduled_by_method ON charges (payment_method_id) WHERE status = 'scheduled'`);
  await knex.raw('CREATE INDEX settlement_offers_account ON settlement_offers (debt_account_id, created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS settlement_offers_account');
  await knex.raw('DROP INDEX IF EXISTS charges_scheduled_by_method');
}
