/** The hourly retention job (webhooks/retention.ts) finds old events by this index, not by a scan. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX webhook_events_created_at_index ON webhook_events (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_events_created_at_index');
}
