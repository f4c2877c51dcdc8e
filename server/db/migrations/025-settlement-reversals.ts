import type { Knex } from 'knex';

/**
 * A settlement's write-off can be undone: when the bank returns an ACH debit that paid a
 * completed offer, the write-off is reversed by a transaction of its own
 * (`settlement_write_off_reversal`, never a deletion). The offer keeps the charge whose
 * transactions carry its write-off (`write_off_charge_id`), so the reversal finds exactly the
 * rows it undoes, and the payloads find the offer a charge paid.
 */
const KINDS = ['charge', 'void', 'refund', 'ach_settlement', 'ach_return', 'settlement_write_off', 'external', 'external_reversal'];
const kinds = (list: string[]) => list.map((kind) => `'${kind}'`).join(', ');

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  // Widening a varchar changes only the catalog, not the rows.
  await knex.raw('ALTER TABLE transactions ALTER COLUMN kind TYPE varchar(32)');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN (${kinds([...KINDS, 'settlement_write_off_reversal'])}))`);
  await knex.schema.alterTable('settlement_offers', (table) => {
    table.uuid('write_off_charge_id').references('charges.id').onDelete('RESTRICT');
    table.index(['write_off_charge_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('settlement_offers', (table) => table.dropColumn('write_off_charge_id'));
  await knex.raw(`DELETE FROM transactions WHERE kind = 'settlement_write_off_reversal'`);
  await knex.raw('ALTER TABLE transactions DROP CONSTRAINT transactions_kind');
  await knex.raw(`ALTER TABLE transactions ADD CONSTRAINT transactions_kind CHECK (kind IN (${kinds(KINDS)}))`);
}
