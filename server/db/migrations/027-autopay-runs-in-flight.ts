import type { Knex } from 'knex';

/**
 * An autopay run whose charge waits for the gateway's answer is `processing`: the run is
 * claimed and its charge reserved in one short transaction, the gateway is asked after the
 * commit, and the answer (recorded by the run, or by charge-recovery after a crash) turns the
 * run `charged` or `failed`. The runs in flight are found by their charge (a small partial index).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE autopay_runs DROP CONSTRAINT autopay_runs_outcome');
  await knex.raw(`ALTER TABLE autopay_runs ADD CONSTRAINT autopay_runs_outcome CHECK (outcome IN ('charged', 'failed', 'skipped', 'processing'))`);
  await knex.raw(`CREATE INDEX autopay_runs_in_flight ON autopay_runs (charge_id) WHERE outcome = 'processing'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS autopay_runs_in_flight');
  // A run still in flight when rolled back is shown as it was before its answer: failed.
  await knex.raw(`UPDATE autopay_runs SET outcome = 'failed' WHERE outcome = 'processing'`);
  await knex.raw(`UPDATE autopays SET last_outcome = 'failed' WHERE last_outcome = 'processing'`);
  await knex.raw('ALTER TABLE autopay_runs DROP CONSTRAINT autopay_runs_outcome');
  await knex.raw(`ALTER TABLE autopay_runs ADD CONSTRAINT autopay_runs_outcome CHECK (outcome IN ('charged', 'failed', 'skipped'))`);
}
