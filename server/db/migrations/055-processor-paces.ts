import type { Knex } from 'knex';

/**
 * The processors' pace, shared by every process of the deployment (server/gateway/processor-pace.ts):
 * one row per processor account (`key`: an opaque id of its configuration, never a secret nor a
 * digest of one) holding the next free slot, in microseconds since the epoch on the database's
 * clock. `processor_pace_take` hands out up to `wanted` slots at once, under the row's lock, in
 * one statement: evenly spaced (`spacing_us` apart: never more than the rate in any one-second
 * window), none in the last `guard_us` of a second (room to send it within its own second), none
 * further ahead than `horizon_us` (a process that dies wastes at most that much of the rate).
 * It answers the slots, the database's time after the lock was taken, and the next free slot.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('processor_paces', (table) => {
    table.string('key', 200).primary();
    table.bigInteger('next_us').notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`
    CREATE FUNCTION processor_pace_take(p_key text, p_wanted integer, p_spacing_us bigint, p_guard_us bigint, p_horizon_us bigint)
    RETURNS TABLE (slots bigint[], now_us bigint, next_us bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_next bigint;
      v_now bigint;
      v_at bigint;
      v_slots bigint[] := '{}';
    BEGIN
      SELECT p.next_us INTO v_next FROM processor_paces p WHERE p.key = p_key FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO processor_paces AS p (key, next_us) VALUES (p_key, 0) ON CONFLICT (key) DO NOTHING;
        SELECT p.next_us INTO v_next FROM processor_paces p WHERE p.key = p_key FOR UPDATE;
      END IF;
      -- Read after the lock is held: no slot is handed out before the last one given plus the spacing.
      v_now := floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint;
      v_at := greatest(v_next, v_now);
      WHILE cardinality(v_slots) < p_wanted LOOP
        IF v_at % 1000000 >= 1000000 - p_guard_us THEN
          v_at := v_at - v_at % 1000000 + 1000000;
        END IF;
        EXIT WHEN v_at > v_now + p_horizon_us;
        v_slots := v_slots || v_at;
        v_at := v_at + p_spacing_us;
      END LOOP;
      IF cardinality(v_slots) > 0 THEN
        UPDATE processor_paces p SET next_us = v_at, updated_at = now() WHERE p.key = p_key;
      END IF;
      RETURN QUERY SELECT v_slots, v_now, v_at;
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS processor_pace_take(text, integer, bigint, bigint, bigint)');
  await knex.schema.dropTable('processor_paces');
}
