import type { Knex } from 'knex';

/**
 * Settlement offers: one row per offer, at most one `pending` or `accepted` per account (the
 * index decides a race). While an offer is accepted its account carries `settlement_discount`,
 * the cents it forgives: what the account may be paid is the balance minus it (payment terms).
 * A completed offer writes the rest off as a `settlement_write_off` transaction of the charge
 * that paid the settled sum; a charge that pays an offer at once has source `settlement_offer`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('settlement_offers', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('CASCADE');
    table.string('name', 255).notNullable();
    table.string('status', 16).notNullable().defaultTo('pending');
    table.bigInteger('amount').notNullable();
    table.bigInteger('discount').notNullable();
    table.decimal('discount_percentage', 5, 2).notNullable();
    table.bigInteger('discounted_amount').notNullable();
    table.smallint('months_period').notNullable();
    table.specificType('allowed', 'text[]').notNullable();
    table.timestamp('expires_at', { useTz: true });
    table.string('accepted_option', 16);
    table.timestamp('accepted_at', { useTz: true });
    table.timestamp('completed_at', { useTz: true });
    table.timestamp('ended_at', { useTz: true });
    table.uuid('charge_id').references('charges.id').onDelete('SET NULL');
    table.uuid('payment_plan_id').references('payment_plans.id').onDelete('SET NULL');
    table.uuid('payment_method_id').references('payment_methods.id').onDelete('SET NULL');
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE settlement_offers ADD CONSTRAINT settlement_offers_status CHECK (status IN ('pending', 'accepted', 'completed', 'expired', 'revoked', 'superseded', 'broken'))`,
  );
  await knex.raw(`ALTER TABLE settlement_offers ADD CONSTRAINT settlement_offers_sum CHECK (discount > 0 AND discounted_amount > 0 AND discount + discounted_amount = amount)`);
  await knex.raw(`CREATE UNIQUE INDEX settlement_offers_one_open_per_account ON settlement_offers (debt_account_id) WHERE status IN ('pending', 'accepted')`);
  await knex.raw('CREATE INDEX settlement_offers_tenant_created ON settlement_offers (organization_id, environment, created_at, id)');
  // What the expiry sweep reads: pending offers by when they lapse.
  await knex.raw(`CREATE INDEX settlement_offers_expiring ON settlement_offers (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL`);
  await knex.raw('CREATE INDEX settlement_offers_charge ON settlement_offers (charge_id) WHERE charge_id IS NOT NULL');
  await knex.raw('CREATE INDEX settlement_offers_plan ON settlement_offers (payment_plan_id) WHERE payment_plan_id IS NOT NULL');

  await knex.schema.alterTable('debt_accounts', (table) => {
    table.bigInteger('settlement_discount');
  });

  await knex.raw('ALTER TABLE transactions ALTER COLUMN kind TYPE varchar(24)');
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN ('charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'settlement_write_off'))`);
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_source');
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_source CHECK (source IN ('api', 'payment_plan', 'settlement_offer'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE charges DROP CONSTRAINT charges_source');
  await knex.raw(`UPDATE charges SET source = 'api' WHERE source = 'settlement_offer'`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_source CHECK (source IN ('api', 'payment_plan'))`);
  await knex.raw(`DELETE FROM transactions WHERE kind = 'settlement_write_off'`);
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN ('charge', 'void', 'refund', 'ach_settlement', 'ach_return'))`);
  await knex.raw('ALTER TABLE transactions ALTER COLUMN kind TYPE varchar(16)');
  await knex.schema.alterTable('debt_accounts', (table) => {
    table.dropColumn('settlement_discount');
  });
  await knex.schema.dropTable('settlement_offers');
}
