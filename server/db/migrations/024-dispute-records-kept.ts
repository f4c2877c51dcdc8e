import type { Knex } from 'knex';

/**
 * A debt account's disputes are records the collector must keep (12 CFR 1006.100: records of
 * compliance, three years after the last collection activity on the debt), so deleting the
 * account no longer deletes them with it: its key becomes RESTRICT, and the database refuses
 * the delete (the API answers 409; the account can be closed instead).
 */
const KEY = 'debt_account_disputes_debt_account_id_foreign';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE debt_account_disputes DROP CONSTRAINT ${KEY}`);
  await knex.raw(`ALTER TABLE debt_account_disputes ADD CONSTRAINT ${KEY} FOREIGN KEY (debt_account_id) REFERENCES debt_accounts (id) ON DELETE RESTRICT`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE debt_account_disputes DROP CONSTRAINT ${KEY}`);
  await knex.raw(`ALTER TABLE debt_account_disputes ADD CONSTRAINT ${KEY} FOREIGN KEY (debt_account_id) REFERENCES debt_accounts (id) ON DELETE CASCADE`);
}
