import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('bulk_actions', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('status', 16).notNullable().defaultTo('pending');
    table.integer('count').notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('completed_at', { useTz: true });
  });

  // Each submitted row and what became of it. A row leaves `pending` in the same transaction
  // that creates its records, which is what makes a re-run after a crash create nothing twice.
  await knex.schema.createTable('bulk_rows', (table) => {
    table.uuid('bulk_action_id').notNullable().references('bulk_actions.id').onDelete('CASCADE');
    table.integer('position').notNullable();
    table.uuid('organization_id').notNullable();
    table.specificType('environment', 'environment').notNullable();
    table.jsonb('payload').notNullable();
    table.string('status', 16).notNullable().defaultTo('pending');
    table.jsonb('errors');
    table.timestamp('processed_at', { useTz: true });
    table.primary(['bulk_action_id', 'position']);
  });
  await knex.raw(`CREATE INDEX bulk_rows_pending ON bulk_rows (bulk_action_id, position) WHERE status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('bulk_rows');
  await knex.schema.dropTableIfExists('bulk_actions');
}
