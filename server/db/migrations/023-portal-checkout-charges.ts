import type { Knex } from 'knex';

/**
 * A Portal checkout's charge made now, kept from its reservation until its answer is recorded:
 * who checked out (the device, the customer, the account), as what (a guest, the full balance)
 * and when. The checkout's activity events are recorded from it with the answer, in the
 * transaction that records the answer, by whoever records it (the request, its late answer, or
 * recovery after a crash); `tracked_at` marks that done, once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('portal_checkout_charges', (table) => {
    table.uuid('charge_id').primary().references('charges.id').onDelete('CASCADE');
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.string('device_id', 255).notNullable();
    table.uuid('customer_id').references('customers.id').onDelete('SET NULL');
    table.uuid('debt_account_id').references('debt_accounts.id').onDelete('SET NULL');
    table.boolean('guest').notNullable();
    table.boolean('full_amount').notNullable();
    table.timestamp('occurred_at', { useTz: true }).notNullable();
    table.timestamp('tracked_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('portal_checkout_charges');
}
