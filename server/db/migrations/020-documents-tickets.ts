import type { Knex } from 'knex';

/**
 * Documents shared with a debtor (to read or to sign), the audit record of each signature, and
 * support tickets with their threads.
 *
 * A signature is kept as long as its account (ESIGN's record of the consent and of what was
 * signed): it goes only with the account (cascade), never by a request of its own; one per
 * document and context. A checkout signature's event waits for the payment: `confirmed_at`
 * says it fired, so it fires once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('documents', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('debt_account_id').notNullable().references('debt_accounts.id').onDelete('CASCADE');
    table.string('external_id', 255);
    table.string('name', 255).notNullable();
    table.string('description', 2000);
    table.boolean('signature_required').notNullable();
    table.specificType('contexts', 'text[]').notNullable();
    table.string('status', 16).notNullable();
    // The storage port's key (files/file-store.ts): never a name a client gave.
    table.uuid('file_key').notNullable();
    table.string('content_type', 64).notNullable();
    table.integer('size').notNullable();
    table.string('sha256', 64).notNullable();
    table.timestamp('viewed_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
    table.unique(['organization_id', 'environment', 'external_id']);
  });
  await knex.raw(`ALTER TABLE documents ADD CONSTRAINT documents_status CHECK (status IN ('shared', 'pending', 'viewed', 'signed', 'voided'))`);
  await knex.raw('CREATE INDEX documents_tenant_created ON documents (organization_id, environment, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX documents_account ON documents (debt_account_id, created_at)');

  await knex.schema.createTable('document_signatures', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('document_id').notNullable().references('documents.id').onDelete('CASCADE');
    table.string('context', 32).notNullable();
    table.uuid('customer_id');
    table.string('signer_name', 255).notNullable();
    table.timestamp('signed_at', { useTz: true }).notNullable();
    table.string('ip_address', 64).notNullable();
    table.string('user_agent', 1024).notNullable();
    table.string('consent_version', 32).notNullable();
    table.string('file_sha256', 64).notNullable();
    table.timestamp('confirmed_at', { useTz: true });
    table.unique(['document_id', 'context']);
  });

  await knex.schema.createTable('tickets', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('customer_id').references('customers.id').onDelete('SET NULL');
    table.uuid('debt_account_id').references('debt_accounts.id').onDelete('SET NULL');
    table.string('name', 255).notNullable();
    table.string('email', 255);
    table.string('phone', 32);
    table.string('category', 64).notNullable();
    table.string('subject', 255).notNullable();
    table.string('status', 16).notNullable();
    table.string('source', 16).notNullable();
    table.boolean('is_read_by_customer').notNullable();
    table.boolean('is_read_by_organization').notNullable();
    table.jsonb('assigned_user');
    table.timestamp('last_activity_at', { useTz: true }).notNullable();
    table.timestamp('resolved_at', { useTz: true });
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(`ALTER TABLE tickets ADD CONSTRAINT tickets_status CHECK (status IN ('open', 'in_progress', 'resolved'))`);
  await knex.raw(`ALTER TABLE tickets ADD CONSTRAINT tickets_source CHECK (source IN ('collect', 'guest'))`);
  await knex.raw('CREATE INDEX tickets_tenant_activity ON tickets (organization_id, environment, last_activity_at DESC, id DESC)');
  await knex.raw('CREATE INDEX tickets_customer ON tickets (customer_id, last_activity_at DESC)');

  await knex.schema.createTable('ticket_messages', (table) => {
    table.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    table.uuid('organization_id').notNullable().references('organizations.id').onDelete('CASCADE');
    table.specificType('environment', 'environment').notNullable();
    table.uuid('ticket_id').notNullable().references('tickets.id').onDelete('CASCADE');
    table.text('body').notNullable();
    table.boolean('is_secure').notNullable();
    table.string('source', 16).notNullable();
    table.string('sender_type', 16).notNullable();
    table.uuid('sender_id');
    table.string('sender_name', 255).notNullable();
    table.uuid('file_key');
    table.string('file_type', 64);
    table.timestamp('created_at', { useTz: true }).notNullable();
    // The order of writing, for messages of one instant (a frozen sandbox clock gives many).
    table.bigIncrements('seq', { primaryKey: false });
  });
  await knex.raw('CREATE INDEX ticket_messages_ticket ON ticket_messages (ticket_id, created_at, seq)');

  // The tickets a guest opened in this browser: the only credential a guest has for their thread.
  await knex.schema.alterTable('portal_browser_sessions', (table) => {
    table.specificType('ticket_ids', 'uuid[]').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('portal_browser_sessions', (table) => {
    table.dropColumn('ticket_ids');
  });
  await knex.schema.dropTableIfExists('ticket_messages');
  await knex.schema.dropTableIfExists('tickets');
  await knex.schema.dropTableIfExists('document_signatures');
  await knex.schema.dropTableIfExists('documents');
}
