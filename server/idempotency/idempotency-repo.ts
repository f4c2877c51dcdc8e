/**
 * Idempotency records in PostgreSQL, one per tenant, caller, method, path and key: every server
 * process sees the same ones. Claiming a key is one statement, so two requests racing for it
 * cannot both win. The request is kept only as its keyed fingerprint, and the answer only
 * sealed (AES-256-GCM under the data key): an answer may hold a credential (a customer
 * session's `portal_url`), and the database is not where it may lie in the clear.
 */
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';
import type { IdempotencyScope } from './request-fingerprint';

export const IDEMPOTENCY_KEYS = 'idempotency_keys';
/** How long a first answer is kept. */
export const KEEP_HOURS = 24;
/**
 * A claim still `running` after this long was left by a process that died mid-request: the
 * key may be claimed again (a charge is still made at most once per key: a unique index).
 */
const ABANDONED_AFTER_MINUTES = 5;
/** Expired records deleted by each claim: pruning rides on writes, a bounded amount each time. */
const PRUNE_BATCH = 20;

export interface IdempotencyRecord {
  request_hash: string;
  status: 'running' | 'done';
  response_status: number | null;
  response_body: unknown;
}

export function idempotencyRepo(db: Knex, tenant: Tenant, secrets: SecretBox, scope: Omit<IdempotencyScope, 'fingerprint'>) {
  const where = { ...tenantColumns(tenant), caller: scope.caller, method: scope.method, path: scope.path, key: scope.key };
  return {
    /**
     * Claims the key for a new request: true when it was free (never used, expired, or abandoned
     * while running), false when a live record holds it. Such a record is taken over in place.
     */
    async claim(fingerprint: string): Promise<boolean> {
      // Pruning rides on the claim's own statement (no round trip of its own): up to
      // PRUNE_BATCH expired records of any tenant, never this key's own (the claim takes an
      // expired one over in place). The oldest first and by their row addresses: the plan
      // walks the `expires_at` index and deletes what it found, whatever the statistics say
      // (a table grown since its last ANALYZE was otherwise scanned whole, twice).
      const { rows } = await db.raw(
        `WITH pruned AS (
           DELETE FROM ${IDEMPOTENCY_KEYS}
            WHERE ctid = ANY(ARRAY(
              SELECT ctid FROM ${IDEMPOTENCY_KEYS}
               WHERE expires_at <= now()
                 AND (organization_id, environment, caller, method, path, key) <> (?::uuid, ?::environment, ?, ?, ?, ?)
               ORDER BY expires_at
               LIMIT ${PRUNE_BATCH}))
         )
         INSERT INTO ${IDEMPOTENCY_KEYS} (organization_id, environment, caller, key, method, path, request_hash, status, locked_at, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', now(), now(), now() + interval '${KEEP_HOURS} hours')
         ON CONFLICT (organization_id, environment, caller, method, path, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, status = 'running',
               response_status = NULL, response_sealed = NULL, locked_at = now(), created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE ${IDEMPOTENCY_KEYS}.expires_at <= now()
              OR (${IDEMPOTENCY_KEYS}.status = 'running' AND ${IDEMPOTENCY_KEYS}.locked_at < now() - interval '${ABANDONED_AFTER_MINUTES} minutes')
         RETURNING key`,
        [
          ...[tenant.organizationId, tenant.environment, scope.caller, scope.method, scope.path, scope.key],
          ...[tenant.organizationId, tenant.environment, scope.caller, scope.key, scope.method, scope.path, fingerprint],
        ],
      );
      return rows.length === 1;
    },

    async find(): Promise<IdempotencyRecord | undefined> {
      const row = await db(IDEMPOTENCY_KEYS).where(where).first('request_hash', 'status', 'response_status', 'response_sealed');
      if (!row) return undefined;
      const { response_sealed: sealed, ...record } = row as Omit<IdempotencyRecord, 'response_body'> & { response_sealed: string | null };
      return { ...record, response_body: sealed === null ? null : JSON.parse(secrets.decrypt(sealed)) };
    },

    async complete(status: number, body: unknown): Promise<void> {
      await db(IDEMPOTENCY_KEYS)
        .where(where)
        .update({ status: 'done', response_status: status, response_sealed: secrets.encrypt(JSON.stringify(body ?? null)), locked_at: null });
    },

    /** Forgets a claim whose request kept nothing (a 500, or an answer that was not JSON): a retry runs again. */
    async release(): Promise<void> {
      await db(IDEMPOTENCY_KEYS).where(where).andWhere({ status: 'running' }).delete();
    },
  };
}
