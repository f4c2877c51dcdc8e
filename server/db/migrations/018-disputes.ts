import type { Knex } from 'knex';

/**
 * Disputes (FDCPA §809(b), 12 CFR 1006.38): one row per dispute of a debt account, its comments
 * (a thread: `reply_to` names the comment answered) and its files (the storage port's key, never
 * the upload's name as a path). A dispute keeps what decides its hold at filing
 * (`in_writing`, `within_validation_period`); whether it holds now also reads the organization's
 * `dispute_hold` setting. The debt account gains the day its validation notice was sent.
 * Payment-plan instalments gain the status `skipped` (fell due during a hold).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('debt_accounts', (table) => {
    table.date('validation_notice_sent_at');
  });

  await knex.schema.createTable('debt_account_disputes', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('CASCADE');
    table.uuid('customer_id').notNullable();
    table.string('reason', 32).notNullable();
    table.text('details');
    table.string('account_number', 255);
    table.string('username', 255);
    table.string('name', 255).notNullable();
    table.string('email', 255);
    table.string('phone_number', 32);
    table.string('address_1', 255);
    table.string('address_2', 255);
    table.string('city', 255);
    table.string('state', 255);
    table.string('zip', 5);
    table.string('status', 16).notNullable().defaultTo('pending');
    table.text('resolution');
    table.bigInteger('disputed_amount').notNullable();
    table.boolean('in_writing').notNullable();
    table.timestamp('received_at', { useTz: true }).notNullable();
    table.boolean('within_validation_period').notNullable();
    table.string('source', 8).notNullable();
    table.timestamp('resolved_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['organization_id', 'environment', 'received_at']);
    table.index(['debt_account_id']);
  });
  await knex.raw(
    `ALTER TABLE debt_account_disputes ADD CONSTRAINT debt_account_disputes_status CHECK (status IN ('pending', 'under_review', 'verified', 'resolved', 'withdrawn'))`,
  );
  await knex.raw(`ALTER TABLE debt_account_disputes ADD CONSTRAINT debt_account_disputes_source CHECK (source IN ('api', 'portal', 'guest'))`);
  await knex.raw(`CREATE INDEX debt_account_disputes_open ON debt_account_disputes (debt_account_id) WHERE status IN ('pending', 'under_review')`);

  await knex.schema.createTable('dispute_comments', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('dispute_id').notNullable().references('debt_account_disputes.id').onDelete('CASCADE');
    table.uuid('reply_to').references('dispute_comments.id');
    table.text('comment').notNullable();
    table.string('author_name', 255).notNullable();
    table.string('author_title', 255);
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['dispute_id']);
  });

  await knex.schema.createTable('dispute_files', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('dispute_id').notNullable().references('debt_account_disputes.id').onDelete('CASCADE');
    table.string('name', 255).notNullable();
    // The storage port's key: ours, never the upload's name.
    table.uuid('storage_key').notNullable().unique();
    table.string('content_type', 32).notNullable();
    table.integer('size').notNullable();
    table.string('sha256', 64).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['dispute_id']);
  });

  await knex.raw('ALTER TABLE payment_plan_charges DROP CONSTRAINT payment_plan_charges_status');
  await knex.raw(`ALTER TABLE payment_plan_charges ADD CONSTRAINT payment_plan_charges_status CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled', 'skipped'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payment_plan_charges DROP CONSTRAINT payment_plan_charges_status');
  await knex.raw(`UPDATE payment_plan_charges SET status = 'canceled' WHERE status = 'skipped'`);
  await knex.raw(`ALTER TABLE payment_plan_charges ADD CONSTRAINT payment_plan_charges_status CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled'))`);
  await knex.schema.dropTable('dispute_files');
  await knex.schema.dropTable('dispute_comments');
  await knex.schema.dropTable('debt_account_disputes');
  await knex.schema.alterTable('debt_accounts', (table) => table.dropColumn('validation_notice_sent_at'));
}
