import type { Knex } from 'knex';
import { decodeEventBody, encodeEventBody } from '../../kernel/event-body';

/**
 * Two things the delivery worker and the event log needed.
 *
 * Slow webhooks: `slow_until` marks a webhook seen answering slowly (its attempts in flight
 * at its cap, or an answer after more than a second); until then its attempts wait behind
 * everyone else's in the delivery queue (a lower pg-boss priority), so a slow endpoint never
 * delays a fast one (webhooks/delivery-lanes.ts).
 *
 * Compact events: the payload moves from `payload jsonb` to `body bytea`, its JSON text
 * compressed in the process (event-body.ts). PostgreSQL compresses only rows past about 2 kB
 * (015's toast_tuple_target = 256 changed nothing below that, so it is reset), and most
 * payloads are smaller. The column is stored EXTERNAL: PostgreSQL does not try to compress
 * again what is compressed already, and only moves a very large body out of the row.
 *
 * Deliveries updated in place: recording an attempt rewrote a delivery row and, because the
 * partial index of unfinished deliveries names `delivered_at` and `failed_at`, added an entry
 * to each of its five indexes. The order check needs only the delivery just before one (015's
 * partial index served "the nearest unfinished one"), so a plain index on (webhook, object,
 * sequence) replaces it; no index names a column an attempt changes, and with room left on
 * each page (fillfactor 70) PostgreSQL updates the row in place (a HOT update) without
 * touching any index.
 */
const BATCH = 1000;

async function convert(knex: Knex, from: 'payload' | 'body', write: (row: { id: string; value: unknown }) => string): Promise<void> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows: { id: string; value: unknown }[] = await knex('webhook_events').where('id', '>', after).orderBy('id').limit(BATCH).select('id', `${from} as value`);
    if (rows.length === 0) return;
    const to = from === 'payload' ? 'body' : 'payload';
    await knex.raw(
      `UPDATE webhook_events e SET ${to} = v.value FROM unnest(?::uuid[], ?::${to === 'body' ? 'bytea' : 'jsonb'}[]) AS v(id, value) WHERE e.id = v.id`,
      [rows.map((row) => row.id), rows.map(write)],
    );
    after = rows[rows.length - 1]!.id;
  }
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhooks', (table) => {
    table.timestamp('slow_until', { useTz: true });
  });

  await knex.raw('ALTER TABLE webhook_events ADD COLUMN body bytea');
  await convert(knex, 'payload', (row) => `\\x${encodeEventBody(row.value).toString('hex')}`);
  await knex.raw('ALTER TABLE webhook_events DROP COLUMN payload');
  await knex.raw('ALTER TABLE webhook_events ALTER COLUMN body SET NOT NULL, ALTER COLUMN body SET STORAGE EXTERNAL');
  await knex.raw('ALTER TABLE webhook_events RESET (toast_tuple_target)');

  await knex.raw('CREATE INDEX webhook_deliveries_order_index ON webhook_deliveries (webhook_id, object_id, sequence)');
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_unfinished_order_index');
  await knex.raw('ALTER TABLE webhook_deliveries SET (fillfactor = 70)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_deliveries RESET (fillfactor)');
  await knex.raw(
    'CREATE INDEX webhook_deliveries_unfinished_order_index ON webhook_deliveries (webhook_id, object_id, sequence) WHERE delivered_at IS NULL AND failed_at IS NULL',
  );
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_order_index');
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN payload jsonb');
  await convert(knex, 'body', (row) => JSON.stringify(decodeEventBody(row.value as Buffer)));
  await knex.raw('ALTER TABLE webhook_events DROP COLUMN body');
  await knex.raw('ALTER TABLE webhook_events ALTER COLUMN payload SET NOT NULL');
  await knex.raw('ALTER TABLE webhook_events SET (toast_tuple_target = 256)');
  await knex.schema.alterTable('webhooks', (table) => {
    table.dropColumn('slow_until');
  });
}
