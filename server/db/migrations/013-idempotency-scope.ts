import type { Knex } from 'knex';

/**
 * Idempotency keys belong to whoever sent them, and keep nothing a card number can be tested
 * against:
 * - `idempotency_keys`: one record per tenant, caller, method, path and key; the request as its
 *   keyed fingerprint (HMAC, after the card and bank numbers were replaced by their keyed
 *   fingerprints), the answer sealed. The records written before hold an unkeyed SHA-256 of
 *   bodies that held card numbers and security codes, and answers in the clear: they cannot be
 *   re-keyed (the bodies are gone), so they are deleted now rather than left to expire in 24 h.
 * - `charges`: unique per tenant, scope (caller, method and path) and key, with the request's
 *   fingerprint. A charge made before keeps its key under the scope it was most likely made in
 *   (a Portal form's key names its browser session; any other key, the tenant's live API
 *   token), with no fingerprint: a retry of it by that caller is answered with it, as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('idempotency_keys').delete();
  await knex.raw('ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey');
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.dropColumn('response_body');
    // `token:<api token id>`; the method and path are the request's.
    table.string('caller', 128).notNullable();
    // AES-256-GCM of the JSON answer under the data key (an answer may hold a link's token).
    table.text('response_sealed');
    table.primary(['organization_id', 'environment', 'caller', 'method', 'path', 'key']);
  });
  await knex.raw(`COMMENT ON COLUMN idempotency_keys.request_hash IS 'HMAC-SHA-256 (key derived from the data key) of method, path and body, card and bank numbers replaced by keyed fingerprints, security codes removed'`);

  await knex.schema.alterTable('charges', (table) => {
    table.dropUnique(['organization_id', 'environment', 'idempotency_key']);
    table.string('idempotency_scope', 2400);
    table.string('idempotency_fingerprint', 64);
  });
  await knex.raw(`
    UPDATE charges c SET idempotency_scope = CASE
      WHEN c.idempotency_key ~ '^portal-[0-9a-f-]{36}-[0-9a-f]{32}$'
        THEN 'portal:' || c.customer_id || ':' || substr(c.idempotency_key, 8, 36) || ' POST /accounts/' || c.debt_account_id || '/pay'
      ELSE 'token:' || (SELECT t.id FROM api_tokens t
                         WHERE t.organization_id = c.organization_id AND t.environment = c.environment AND t.revoked_at IS NULL
                         ORDER BY t.created_at DESC LIMIT 1) || ' POST /api/v1/charges'
    END
    WHERE c.idempotency_key IS NOT NULL`);
  await knex.raw(
    'CREATE UNIQUE INDEX charges_idempotency_scope_key_unique ON charges (organization_id, environment, idempotency_scope, idempotency_key) WHERE idempotency_key IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX charges_idempotency_scope_key_unique');
  await knex.schema.alterTable('charges', (table) => {
    table.dropColumn('idempotency_scope');
    table.dropColumn('idempotency_fingerprint');
    table.unique(['organization_id', 'environment', 'idempotency_key']);
  });
  await knex('idempotency_keys').delete();
  await knex.raw('ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey');
  await knex.schema.alterTable('idempotency_keys', (table) => {
    table.dropColumn('caller');
    table.dropColumn('response_sealed');
    table.jsonb('response_body');
    table.primary(['organization_id', 'environment', 'key']);
  });
}
