import type { Knex } from 'knex';

/**
 * A dispute's customer is its account's customer. An account that moved to another customer
 * before disputes followed it (PUT /debt-accounts/{id} with `customer_id`) left its disputes
 * naming the customer it came from, and their payloads could not be built; they follow now.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE debt_account_disputes AS dispute SET customer_id = account.customer_id
    FROM debt_accounts AS account
    WHERE account.id = dispute.debt_account_id AND dispute.customer_id <> account.customer_id`);
}

export async function down(): Promise<void> {
  // Which customer a dispute named before is not kept: nothing to undo.
}
