/**
 * `locations.debt_accounts_count`: the accounts using a location (as their location or as an
 * additional one), kept by statement-level triggers in the very transaction that attaches or
 * detaches accounts, whatever the path (API, bulk import, deletes, location changes, cascades).
 * Reading a location's count is then one row, however many accounts it has.
 *
 * The triggers see the statement's rows as transition tables, so a bulk insert of 500 accounts
 * adds to each location once, not 500 times.
 */
import type { Knex } from 'knex';

const TABLES = ['debt_accounts', 'debt_account_locations'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE locations ADD COLUMN debt_accounts_count integer NOT NULL DEFAULT 0');
  await knex.raw(`
    CREATE FUNCTION location_counter_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE locations l SET debt_accounts_count = l.debt_accounts_count + d.n
        FROM (SELECT location_id, count(*) AS n FROM new_rows GROUP BY location_id) d
       WHERE l.id = d.location_id;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION location_counter_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE locations l SET debt_accounts_count = l.debt_accounts_count - d.n
        FROM (SELECT location_id, count(*) AS n FROM old_rows GROUP BY location_id) d
       WHERE l.id = d.location_id;
      RETURN NULL;
    END $$`);
  // Most updates (balances, statuses) leave the location alone: only a change is written.
  await knex.raw(`
    CREATE FUNCTION location_counter_moved() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE locations l SET debt_accounts_count = l.debt_accounts_count + d.n
        FROM (SELECT location_id, sum(n) AS n FROM (
                SELECT location_id, count(*) AS n FROM new_rows GROUP BY location_id
                UNION ALL
                SELECT location_id, -count(*) FROM old_rows GROUP BY location_id
              ) changes GROUP BY location_id HAVING sum(n) <> 0) d
       WHERE l.id = d.location_id;
      RETURN NULL;
    END $$`);
  for (const table of TABLES) {
    await knex.raw(`CREATE TRIGGER ${table}_location_added AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION location_counter_added()`);
    await knex.raw(`CREATE TRIGGER ${table}_location_removed AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION location_counter_removed()`);
    await knex.raw(
      `CREATE TRIGGER ${table}_location_moved AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION location_counter_moved()`,
    );
  }
  // Existing accounts, counted once (the migration runs under its lock, before any server serves).
  await knex.raw(`
    UPDATE locations l SET debt_accounts_count = d.n
      FROM (SELECT location_id, count(*) AS n FROM (
              SELECT location_id FROM debt_accounts UNION ALL SELECT location_id FROM debt_account_locations
            ) uses GROUP BY location_id) d
     WHERE l.id = d.location_id`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) {
    for (const trigger of ['added', 'removed', 'moved']) await knex.raw(`DROP TRIGGER IF EXISTS ${table}_location_${trigger} ON ${table}`);
  }
  for (const fn of ['added', 'removed', 'moved']) await knex.raw(`DROP FUNCTION IF EXISTS location_counter_${fn}()`);
  await knex.raw('ALTER TABLE locations DROP COLUMN IF EXISTS debt_accounts_count');
}
