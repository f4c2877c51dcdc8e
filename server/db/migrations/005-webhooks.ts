import type { Knex } from 'knex';

/**
 * Webhooks: the subscriptions, the outbox of events (written in the same transaction as the
 * change that causes them) and one delivery row per subscription and event, which the worker
 * updates after each attempt and GET /webhooks/{id}/deliveries reads.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('url', 2048).notNullable();
    table.specificType('events', 'text[]').notNullable();
    // SecretBox.encrypt of the shared secret: never stored in the clear, never returned.
    table.text('secret_sealed').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // The document: a url is not the url of another webhook of the organization and environment.
    table.unique(['organization_id', 'environment', 'url']);
    table.index(['organization_id', 'environment', 'created_at', 'id']);
  });

  await knex.schema.createTable('webhook_events', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('name', 255).notNullable();
    table.jsonb('payload').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['organization_id', 'environment', 'created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    // Deleting a webhook cancels what it had not received yet: the worker finds no row and drops the job.
    table.uuid('webhook_id').notNullable().references('webhooks.id').onDelete('CASCADE');
    table.uuid('event_id').notNullable().references('webhook_events.id').onDelete('CASCADE');
    table.smallint('attempts').notNullable().defaultTo(0);
    table.smallint('last_status_code');
    table.text('last_error');
    table.timestamp('next_attempt_at', { useTz: true });
    table.timestamp('delivered_at', { useTz: true });
    table.timestamp('failed_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.unique(['webhook_id', 'event_id']);
    table.index(['webhook_id', 'created_at', 'id']);
    table.index(['event_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['webhook_deliveries', 'webhook_events', 'webhooks']) await knex.schema.dropTableIfExists(table);
}
