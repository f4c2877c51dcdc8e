import type { Knex } from 'knex';

/**
 * Payments: the sandbox gateway's own tables (its vault and its ledger of simulated payments),
 * our charges, their allocations over debt accounts and their transactions, the gateway token
 * of a saved payment method, and the idempotency keys of every POST.
 *
 * Money is bigint cents. Every row carries its tenant. Unique keys the rules rely on are
 * enforced here, not only in code: one charge per idempotency key, one charge / void /
 * settlement / return transaction per charge, one idempotency record per tenant and key.
 */
function tenant(table: Knex.CreateTableBuilder): void {
  table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
  table.specificType('environment', 'environment').notNullable();
}

function timestamps(table: Knex.CreateTableBuilder, knex: Knex): void {
  table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
}

export async function up(knex: Knex): Promise<void> {
  // The simulator's vault: what a real gateway keeps for a token. It needs the number to know
  // which test card or account a token stands for, so the number is kept, sealed with the data
  // key (SecretBox) as our ACH numbers are; never the card's security code.
  await knex.schema.createTable('sandbox_vault', (table) => {
    table.string('token', 64).primary();
    tenant(table);
    table.string('kind', 8).notNullable();
    table.text('number_sealed').notNullable();
    table.text('routing_number_sealed');
    table.smallint('exp_month');
    table.smallint('exp_year');
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.index(['organization_id', 'environment', 'created_at']);
  });
  await knex.raw(`ALTER TABLE sandbox_vault ADD CONSTRAINT sandbox_vault_kind CHECK (kind IN ('card', 'ach'))`);
  await knex.raw(`ALTER TABLE sandbox_vault ADD CONSTRAINT sandbox_vault_card_expiry CHECK (kind <> 'card' OR (exp_month IS NOT NULL AND exp_year IS NOT NULL))`);
  await knex.raw(`ALTER TABLE sandbox_vault ADD CONSTRAINT sandbox_vault_ach_routing CHECK (kind <> 'ach' OR routing_number_sealed IS NOT NULL)`);

  // The simulator's ledger: each payment it was asked for, so that void, refund and the later
  // ACH outcome are answered from what it decided, as a real gateway would.
  await knex.schema.createTable('sandbox_payments', (table) => {
    table.string('reference', 64).primary();
    tenant(table);
    table.string('token', 64).notNullable().references('sandbox_vault.token').onDelete('RESTRICT');
    table.bigInteger('amount').notNullable();
    table.bigInteger('refunded_amount').notNullable().defaultTo(0);
    table.string('status', 16).notNullable();
    table.string('return_code', 3);
    table.timestamp('settles_at', { useTz: true });
    timestamps(table, knex);
  });
  await knex.raw(`ALTER TABLE sandbox_payments ADD CONSTRAINT sandbox_payments_status CHECK (status IN ('succeeded', 'failed', 'pending', 'settled', 'returned', 'voided'))`);
  await knex.raw(`ALTER TABLE sandbox_payments ADD CONSTRAINT sandbox_payments_amounts CHECK (amount > 0 AND refunded_amount >= 0 AND refunded_amount <= amount)`);

  await knex.schema.alterTable('payment_methods', (table) => {
    // The gateway's token for this card or account; null for a method saved before payments
    // existed (or while production has no gateway): charging it asks for the details again.
    table.string('gateway_token', 64);
  });

  await knex.schema.createTable('charges', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    tenant(table);
    table.string('reference_number', 32).notNullable();
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('RESTRICT');
    table.uuid('customer_id').notNullable().references('customers.id').onDelete('RESTRICT');
    table.uuid('payment_method_id').references('payment_methods.id').onDelete('SET NULL');
    table.string('payment_method_type', 8).notNullable();
    // What is shown of the method, copied at charge time: a method may later be deleted.
    table.string('card_holder', 255);
    table.string('card_last4', 4);
    table.string('card_brand', 16);
    table.smallint('card_exp_month');
    table.smallint('card_exp_year');
    table.string('account_holder', 255);
    table.string('account_type', 16);
    table.string('routing_number_masked', 9);
    table.string('account_number_masked', 17);
    table.string('gateway', 32).notNullable();
    table.string('gateway_reference', 64);
    table.string('status', 24).notNullable();
    table.bigInteger('amount').notNullable();
    table.bigInteger('fees').notNullable().defaultTo(0);
    table.bigInteger('refunded_amount').notNullable().defaultTo(0);
    table.string('error', 255);
    table.string('error_code', 32);
    table.string('return_code', 3);
    table.string('source', 16).notNullable().defaultTo('api');
    table.string('email', 255);
    table.boolean('send_email').notNullable().defaultTo(false);
    table.jsonb('metadata').notNullable().defaultTo('{}');
    table.string('idempotency_key', 255);
    table.timestamp('settled_at', { useTz: true });
    timestamps(table, knex);
    table.unique(['organization_id', 'environment', 'reference_number']);
    table.unique(['organization_id', 'environment', 'idempotency_key']);
    table.index(['organization_id', 'environment', 'created_at', 'id']);
    table.index(['debt_account_id', 'created_at']);
    table.index(['customer_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_status CHECK (status IN ('pending', 'succeeded', 'failed', 'returned', 'voided', 'refunded', 'partially_refunded'))`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_amounts CHECK (amount > 0 AND fees >= 0 AND refunded_amount >= 0 AND refunded_amount <= amount)`);
  await knex.raw(`ALTER TABLE charges ADD CONSTRAINT charges_method_type CHECK (payment_method_type IN ('card', 'ach'))`);

  // How a charge's amount was spread over accounts (a parent's charge goes to its children):
  // a void, refund or return gives back exactly what was taken from each.
  await knex.schema.createTable('charge_allocations', (table) => {
    table.uuid('charge_id').notNullable().references('charges.id').onDelete('CASCADE');
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('RESTRICT');
    tenant(table);
    table.bigInteger('amount').notNullable();
    table.bigInteger('refunded_amount').notNullable().defaultTo(0);
    table.primary(['charge_id', 'debt_account_id']);
    table.index(['debt_account_id']);
  });
  await knex.raw(`ALTER TABLE charge_allocations ADD CONSTRAINT charge_allocations_amounts CHECK (amount > 0 AND refunded_amount >= 0 AND refunded_amount <= amount)`);

  await knex.schema.createTable('transactions', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    tenant(table);
    table.uuid('charge_id').notNullable().references('charges.id').onDelete('RESTRICT');
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('RESTRICT');
    table.string('kind', 16).notNullable();
    table.string('status', 16).notNullable();
    // Signed from the account's side: a charge or settlement is positive, money given back negative.
    table.bigInteger('amount').notNullable();
    table.string('return_code', 3);
    table.string('gateway_reference', 64);
    table.timestamp('submitted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    timestamps(table, knex);
    table.index(['organization_id', 'environment', 'submitted_at', 'id']);
    table.index(['debt_account_id', 'submitted_at']);
    table.index(['charge_id']);
  });
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN ('charge', 'void', 'refund', 'ach_settlement', 'ach_return'))`);
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_status CHECK (status IN ('pending', 'succeeded', 'failed', 'settled', 'returned'))`);
  // Many refunds of one charge, but only one of everything else.
  await knex.raw(`CREATE UNIQUE INDEX transactions_one_per_kind ON transactions (charge_id, kind) WHERE kind <> 'refund'`);

  // Idempotency-Key: the first request's answer, per tenant and key, for 24 hours.
  await knex.schema.createTable('idempotency_keys', (table) => {
    tenant(table);
    table.string('key', 255).notNullable();
    table.string('method', 8).notNullable();
    table.string('path', 2048).notNullable();
    // SHA-256 of method, path and body: the same key with another request is refused.
    table.string('request_hash', 64).notNullable();
    table.string('status', 16).notNullable();
    table.smallint('response_status');
    table.jsonb('response_body');
    table.timestamp('locked_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    table.timestamp('expires_at', { useTz: true }).notNullable();
    table.primary(['organization_id', 'environment', 'key']);
    table.index(['expires_at']);
  });
  await knex.raw(`ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_status CHECK (status IN ('running', 'done'))`);
  await knex.raw(`ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_done CHECK (status <> 'done' OR response_status IS NOT NULL)`);
}

export async function down(knex: Knex): Promise<void> {
  for (const name of ['idempotency_keys', 'transactions', 'charge_allocations', 'charges', 'sandbox_payments', 'sandbox_vault']) {
    await knex.schema.dropTableIfExists(name);
  }
  await knex.schema.alterTable('payment_methods', (table) => table.dropColumn('gateway_token'));
}
