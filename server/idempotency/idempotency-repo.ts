/**
 * Idempotency records in PostgreSQL, one per tenant, caller, method, path and key: every server
 * process sees the same ones. Claiming a key is one statement, so two requests racing for it
 * cannot both win. The request is kept only as its keyed fingerprint, and the answer only
 * sealed (AES-256-GCM under the data key): an answer may hold a credential (a customer
 * session's `portal_url`), and the database is not where it may lie in the clear.
 *
 * Claims, and answers kept, go in group statements (kernel/batcher.ts, as http/access.ts
 * counts tokens): one statement of each in flight per process, those that arrive meanwhile
 * together in the next, so a busy process makes one round trip (and one commit) for many
 * requests and a lone request waits for nothing. Each claim of a group is decided as if alone.
 */
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { batcher } from '../kernel/batcher';
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
/** Expired records deleted per claim: pruning rides on writes, a bounded amount each time. */
const PRUNE_PER_CLAIM = 20;
/** Claims (or answers) in one statement at most. */
const GROUP = 256;

export interface IdempotencyRecord {
  request_hash: string;
  status: 'running' | 'done';
  response_status: number | null;
  response_body: unknown;
}

type Scope = Omit<IdempotencyScope, 'fingerprint'>;

/** A record's key: its tenant, caller, method, path and key. */
interface Keyed {
  tenant: Tenant;
  scope: Scope;
}
/** A record's key columns, as a statement answers them. */
interface KeyColumns {
  organization_id: string;
  environment: string;
  caller: string;
  method: string;
  path: string;
  key: string;
}
const columnsText = (row: KeyColumns) => JSON.stringify([row.organization_id, row.environment, row.caller, row.method, row.path, row.key]);
const keyText = ({ tenant, scope }: Keyed) =>
  columnsText({ organization_id: tenant.organizationId, environment: tenant.environment, caller: scope.caller, method: scope.method, path: scope.path, key: scope.key });

/** The key columns of `items`, as the arrays the statements unnest (in this order). */
const keyArrays = (items: Keyed[]) => [
  items.map((item) => item.tenant.organizationId),
  items.map((item) => item.tenant.environment),
  items.map((item) => item.scope.caller),
  items.map((item) => item.scope.method),
  items.map((item) => item.scope.path),
  items.map((item) => item.scope.key),
];
const ASKED = `unnest(?::uuid[], ?::environment[], ?::text[], ?::text[], ?::text[], ?::text[]`;
const ASKED_COLUMNS = 'organization_id, environment, caller, method, path, key';

// Pruning rides on the claims' statement (no round trip of its own): up to PRUNE_PER_CLAIM
// expired records of any tenant per claim, never one of the claimed keys (a claim takes an
// expired one over in place), the oldest first and by their row addresses: the plan walks the
// `expires_at` index and deletes what it found, whatever the statistics say (a table grown
// since its last ANALYZE was otherwise scanned whole, twice). The claims are inserted in key
// order, so two processes' statements never wait on each other in a circle.
const CLAIM = `
  WITH asked AS (
    SELECT * FROM ${ASKED}, ?::text[]) AS asked(${ASKED_COLUMNS}, request_hash)
  ), pruned AS (
    DELETE FROM ${IDEMPOTENCY_KEYS}
     WHERE ctid = ANY(ARRAY(
       SELECT k.ctid FROM ${IDEMPOTENCY_KEYS} k
        WHERE k.expires_at <= now()
          AND NOT EXISTS (SELECT 1 FROM asked a WHERE a.organization_id = k.organization_id AND a.environment = k.environment
                             AND a.caller = k.caller AND a.method = k.method AND a.path = k.path AND a.key = k.key)
        ORDER BY k.expires_at
        LIMIT ?::integer))
  )
  INSERT INTO ${IDEMPOTENCY_KEYS} (${ASKED_COLUMNS}, request_hash, status, locked_at, created_at, expires_at)
  SELECT ${ASKED_COLUMNS}, request_hash, 'running', now(), now(), now() + interval '${KEEP_HOURS} hours' FROM asked
   ORDER BY ${ASKED_COLUMNS}
  ON CONFLICT (${ASKED_COLUMNS}) DO UPDATE
    SET request_hash = EXCLUDED.request_hash, status = 'running',
        response_status = NULL, response_sealed = NULL, locked_at = now(), created_at = now(), expires_at = EXCLUDED.expires_at
    WHERE ${IDEMPOTENCY_KEYS}.expires_at <= now()
       OR (${IDEMPOTENCY_KEYS}.status = 'running' AND ${IDEMPOTENCY_KEYS}.locked_at < now() - interval '${ABANDONED_AFTER_MINUTES} minutes')
  RETURNING ${ASKED_COLUMNS}`;

// Each answer's record found by its primary key (LATERAL … LIMIT 1: one index probe per answer,
// whatever the statistics say), then updated by its row address.
const COMPLETE = `
  UPDATE ${IDEMPOTENCY_KEYS} AS k
     SET status = 'done', response_status = kept.response_status, response_sealed = kept.sealed, locked_at = NULL
    FROM (SELECT found.ctid, answers.response_status, answers.sealed
            FROM ${ASKED}, ?::smallint[], ?::text[]) AS answers(${ASKED_COLUMNS}, response_status, sealed)
            CROSS JOIN LATERAL (SELECT r.ctid FROM ${IDEMPOTENCY_KEYS} r
              WHERE r.organization_id = answers.organization_id AND r.environment = answers.environment AND r.caller = answers.caller
                AND r.method = answers.method AND r.path = answers.path AND r.key = answers.key LIMIT 1) AS found) AS kept
   WHERE k.ctid = kept.ctid`;

interface Claim extends Keyed {
  fingerprint: string;
}
interface Answer extends Keyed {
  status: number;
  sealed: string;
}

/** The claims and answers of this process, each kind in group statements. */
export function idempotencyGroups(db: Knex) {
  const claims = batcher<Claim, boolean>(
    async (items) => {
      // A key asked twice in one group: its first claim goes in the statement, the others lost to it.
      const keys = items.map(keyText);
      const first = new Map<string, Claim>();
      items.forEach((item, index) => first.has(keys[index]!) || first.set(keys[index]!, item));
      const asked = [...first.values()];
      const { rows } = await db.raw(CLAIM, [...keyArrays(asked), asked.map((item) => item.fingerprint), PRUNE_PER_CLAIM * asked.length]);
      const won = new Set((rows as KeyColumns[]).map(columnsText));
      return items.map((item, index) => first.get(keys[index]!) === item && won.has(keys[index]!));
    },
    { max: GROUP, parallel: 1 },
  );
  const answers = batcher<Answer, void>(
    async (items) => {
      await db.raw(COMPLETE, [...keyArrays(items), items.map((item) => item.status), items.map((item) => item.sealed)]);
      return items.map(() => undefined);
    },
    { max: GROUP, parallel: 1 },
  );
  return {
    claim: (claim: Claim) => claims.add(claim),
    complete: (answer: Answer) => answers.add(answer),
  };
}

export type IdempotencyGroups = ReturnType<typeof idempotencyGroups>;

export function idempotencyRepo(db: Knex, tenant: Tenant, secrets: SecretBox, scope: Scope, groups: IdempotencyGroups) {
  const where = { ...tenantColumns(tenant), caller: scope.caller, method: scope.method, path: scope.path, key: scope.key };
  return {
    /**
     * Claims the key for a new request: true when it was free (never used, expired, or abandoned
     * while running), false when a live record holds it. Such a record is taken over in place.
     */
    claim: (fingerprint: string): Promise<boolean> => groups.claim({ tenant, scope, fingerprint }),

    async find(): Promise<IdempotencyRecord | undefined> {
      const row = await db(IDEMPOTENCY_KEYS).where(where).first('request_hash', 'status', 'response_status', 'response_sealed');
      if (!row) return undefined;
      const { response_sealed: sealed, ...record } = row as Omit<IdempotencyRecord, 'response_body'> & { response_sealed: string | null };
      return { ...record, response_body: sealed === null ? null : JSON.parse(secrets.decrypt(sealed)) };
    },

    complete: (status: number, body: unknown): Promise<void> => groups.complete({ tenant, scope, status, sealed: secrets.encrypt(JSON.stringify(body ?? null)) }),

    /** Forgets a claim whose request kept nothing (a 500, or an answer that was not JSON): a retry runs again. */
    async release(): Promise<void> {
      await db(IDEMPOTENCY_KEYS).where(where).andWhere({ status: 'running' }).delete();
    },
  };
}
