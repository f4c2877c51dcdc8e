import type { Knex } from 'knex';

/**
 * E-mail as Regulation F reads it (12 CFR 1006.6(d)-(e), 1006.14(h), 1006.22(f)(3)):
 *
 * - An opt-out belongs to the address, not to one customer record: `email_opt_outs` holds one
 *   row per tenant and normalized address (lower case, trimmed), and every customer record
 *   with that address, present or future, reads it. `email_opt_out_history` keeps every change
 *   and refuses UPDATE and DELETE (a trigger), so that an opt-out, once recorded, can always
 *   be shown to have existed.
 * - A customer's address records where it came from (`email_source`), whether it is known to
 *   be a work address, and for a creditor's address the creditor's notice date.
 * - The log keeps the From, the Reply-To and the headers sent; `logged` is a message written
 *   to the service's log because no SMTP server is configured.
 *
 * Opt-outs recorded on customers before are carried over to their addresses.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_opt_outs', (table) => {
    table.uuid('organization_id').notNullable().references('organizations.id');
    table.specificType('environment', 'environment').notNullable();
    table.string('address', 320).notNullable();
    table.boolean('opted_out').notNullable();
    table.string('changed_by', 16).notNullable();
    table.timestamp('changed_at', { useTz: true }).notNullable();
    table.primary(['organization_id', 'environment', 'address']);
  });
  await knex.raw(`ALTER TABLE email_opt_outs ADD CONSTRAINT email_opt_outs_changed_by CHECK (changed_by IN ('api', 'link', 'portal'))`);

  await knex.schema.createTable('email_opt_out_history', (table) => {
    table.bigIncrements('id');
    table.uuid('organization_id').notNullable().references('organizations.id');
    table.specificType('environment', 'environment').notNullable();
    table.string('address', 320).notNullable();
    table.boolean('opted_out').notNullable();
    table.string('changed_by', 16).notNullable();
    // The customer record the change came through (its link, or the API call); kept after it is deleted.
    table.uuid('customer_id');
    table.timestamp('changed_at', { useTz: true }).notNullable();
    table.index(['organization_id', 'environment', 'address', 'id'], 'email_opt_out_history_address');
  });
  await knex.raw(`ALTER TABLE email_opt_out_history ADD CONSTRAINT email_opt_out_history_changed_by CHECK (changed_by IN ('api', 'link', 'portal'))`);
  await knex.raw(`
    CREATE FUNCTION email_opt_out_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'email_opt_out_history is append-only';
    END $$`);
  await knex.raw(`
    CREATE TRIGGER email_opt_out_history_append_only BEFORE UPDATE OR DELETE ON email_opt_out_history
      FOR EACH ROW EXECUTE FUNCTION email_opt_out_history_append_only()`);

  await knex.raw(`
    INSERT INTO email_opt_outs (organization_id, environment, address, opted_out, changed_by, changed_at)
    SELECT DISTINCT ON (organization_id, environment, lower(btrim(email)))
           organization_id, environment, lower(btrim(email)), true, coalesce(email_preference_changed_by, 'api'), coalesce(email_preference_changed_at, updated_at)
      FROM customers WHERE email_preference = 'opted_out'
     ORDER BY organization_id, environment, lower(btrim(email)), email_preference_changed_at`);
  await knex.raw(`
    INSERT INTO email_opt_out_history (organization_id, environment, address, opted_out, changed_by, changed_at)
    SELECT organization_id, environment, address, true, changed_by, changed_at FROM email_opt_outs`);
  await knex.raw(`
    UPDATE customers c SET email_preference = 'opted_out', email_preference_changed_at = o.changed_at, email_preference_changed_by = o.changed_by
      FROM email_opt_outs o
     WHERE o.organization_id = c.organization_id AND o.environment = c.environment AND o.address = lower(btrim(c.email)) AND c.email_preference <> 'opted_out'`);
  await knex.raw(`CREATE INDEX customers_email_address ON customers (organization_id, environment, lower(btrim(email)))`);

  await knex.schema.alterTable('customers', (table) => {
    table.string('email_source', 16).notNullable().defaultTo('other');
    table.boolean('email_work_address').notNullable().defaultTo(false);
    table.date('email_creditor_notice_date');
  });
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_email_source CHECK (email_source IN ('creditor', 'debtor', 'skip_trace', 'other'))`);
  await knex.raw(`ALTER TABLE customers ADD CONSTRAINT customers_email_creditor_notice CHECK (email_creditor_notice_date IS NULL OR email_source = 'creditor')`);

  await knex.schema.alterTable('communications', (table) => {
    table.text('from');
    table.text('reply_to');
    table.jsonb('headers');
  });
  await knex.raw('ALTER TABLE communications DROP CONSTRAINT communications_status');
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_status CHECK (status IN ('queued', 'held', 'sent', 'logged', 'suppressed', 'failed'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE communications DROP CONSTRAINT communications_status');
  await knex.raw(`UPDATE communications SET status = 'sent' WHERE status = 'logged'`);
  await knex.raw(`ALTER TABLE communications ADD CONSTRAINT communications_status CHECK (status IN ('queued', 'held', 'sent', 'suppressed', 'failed'))`);
  await knex.schema.alterTable('communications', (table) => table.dropColumns('from', 'reply_to', 'headers'));
  await knex.raw('ALTER TABLE customers DROP CONSTRAINT customers_email_creditor_notice');
  await knex.raw('ALTER TABLE customers DROP CONSTRAINT customers_email_source');
  await knex.schema.alterTable('customers', (table) => table.dropColumns('email_source', 'email_work_address', 'email_creditor_notice_date'));
  await knex.raw('DROP INDEX customers_email_address');
  await knex.schema.dropTable('email_opt_out_history');
  await knex.raw('DROP FUNCTION email_opt_out_history_append_only()');
  await knex.schema.dropTable('email_opt_outs');
}
