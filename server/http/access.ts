/**
 * Authentication and the API rate limit in one statement: it finds the tokens (not revoked)
 * and counts the requests against them. The count is the one row every process shares
 * (`rate_limits`, the table rate-limiter-flexible keeps the other limits in, with the same
 * fixed window and key shape). A token a process sees often may take a lease of a
 * few of its points in the same statement and serve the next requests without one
 * (token-leases.ts): such a token is checked again at most LEASE_MS later, so a revoked token
 * is refused by every process within that bound; without a lease, from the moment the
 * revocation commits.
 *
 * Requests that arrive while a statement is in flight wait for it and then go together in the
 * next one (group commit): a lone request waits for nothing, a busy process makes one round
 * trip for many requests. The count stays exact: a statement adds n to a token's row and gets
 * the total back, and its n requests take the n numbers below that total in arrival order,
 * as if each had counted alone. The window's clock is the database's, so processes on several
 * machines agree on it.
 */
import type { NextFunction, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { hashToken } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { RATE_LIMIT_TABLE, setRateLimitHeaders, type RateLimitOptions } from './rate-limit';
import { tokenLeases, type TokenLeases } from './token-leases';
import { workIsFor } from '../observability/work-context';

// RFC 7235: the scheme is case-insensitive (`bearer`, `BEARER`); the token is not.
export const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i;

interface Row {
  token_id: string;
  token_hash: string;
  organization_id: string;
  environment: Tenant['environment'];
  offset_ms: string | null;
  points: number;
  expire: string;
  ms_before_next: string;
}

/** What one request learns: no tenant (unknown or revoked token), or its tenant and its number in the window. */
type Verdict = { tenant?: undefined } | { tenant: Tenant; points: number; msBeforeNext: number };

// Keys are counted in key order, so two processes' statements never wait on each other in a
// circle. In the conflict branch only EXCLUDED is in reach, so "now" is EXCLUDED.expire less
// the window. The statement writes only the UNLOGGED counters (lost in a database crash in
// any case), so its commit need not wait for the WAL flush: set_config(..., true) lasts until
// the end of this statement's own transaction.
const SQL = `
  WITH unflushed AS (
    SELECT set_config('synchronous_commit', 'off', true)
  ), asked AS (
    SELECT token_hash, CAST(sum(n) AS integer) AS n FROM (
      SELECT token_hash, 1 AS n FROM unnest(CAST($1 AS text[])) AS requests(token_hash)
      UNION ALL SELECT token_hash, n FROM unnest(CAST($4 AS text[]), CAST($5 AS integer[])) AS leases(token_hash, n)
    ) AS points GROUP BY token_hash
  ), token AS (
    SELECT t.id AS token_id, asked.token_hash, asked.n, CAST($2 AS text) || asked.token_hash AS key, t.organization_id, t.environment, sc.offset_ms
      FROM asked JOIN api_tokens t ON t.token_hash = asked.token_hash AND t.revoked_at IS NULL
      LEFT JOIN sandbox_clocks sc ON sc.organization_id = t.organization_id AND t.environment = 'sandbox'
  ), clock AS (
    SELECT CAST(floor(extract(epoch FROM clock_timestamp()) * 1000) AS bigint) AS now FROM unflushed
  ), counted AS (
    INSERT INTO ${RATE_LIMIT_TABLE} AS counts (key, points, expire)
    SELECT token.key, token.n, clock.now + CAST($3 AS bigint) FROM token, clock ORDER BY token.key
    ON CONFLICT (key) DO UPDATE SET
      points = CASE WHEN counts.expire <= EXCLUDED.expire - CAST($3 AS bigint) THEN EXCLUDED.points ELSE counts.points + EXCLUDED.points END,
      expire = CASE WHEN counts.expire <= EXCLUDED.expire - CAST($3 AS bigint) THEN EXCLUDED.expire ELSE counts.expire END
    RETURNING key, points, expire
  )
  SELECT token.token_id, token.token_hash, token.organization_id, token.environment, token.offset_ms, counted.points, counted.expire, counted.expire - clock.now AS ms_before_next
    FROM token JOIN counted ON counted.key = token.key CROSS JOIN clock`;

interface PgConnection {
  query(query: { name: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
}

/** The statement is prepared once per connection (named), not planned again for every batch. */
async function runPrepared(db: Knex, values: unknown[]): Promise<Row[]> {
  const connection = (await db.client.acquireConnection()) as PgConnection;
  try {
    return (await connection.query({ name: 'dcs-authenticate-count-lease', text: SQL, values })).rows;
  } finally {
    await db.client.releaseConnection(connection);
  }
}

interface Waiting {
  tokenHash: string;
  settle: (verdict: Verdict) => void;
  fail: (error: unknown) => void;
}

/**
 * Counts tokens in batches: one statement in flight, the requests meanwhile queued for the
 * next; a request whose token holds a live lease is answered from it at once.
 */
function tokenCounter(db: Knex, keyPrefix: string, durationMs: number, leases: TokenLeases): (tokenHash: string) => Verdict | Promise<Verdict> {
  let queue: Waiting[] = [];
  let busy = false;

  async function flush(): Promise<void> {
    if (busy || queue.length === 0) return;
    // A lease taken by the statement that just ended serves the requests that waited for it.
    const now = Date.now();
    const batch: Waiting[] = [];
    for (const waiting of queue) {
      const leased = leases.take(waiting.tokenHash, now);
      if (leased) waiting.settle(leased);
      else batch.push(waiting);
    }
    queue = [];
    if (batch.length === 0) return;
    busy = true;
    try {
      const asked = new Map<string, number>();
      for (const waiting of batch) asked.set(waiting.tokenHash, (asked.get(waiting.tokenHash) ?? 0) + 1);
      const leasing = new Map<string, number>();
      for (const [tokenHash, n] of asked) {
        const points = leases.ask(tokenHash, n);
        if (points > 0) leasing.set(tokenHash, points);
      }
      const clockMovesBefore = leases.clockMoves();
      const rows = await runPrepared(db, [batch.map((w) => w.tokenHash), `${keyPrefix}:`, durationMs, [...leasing.keys()], [...leasing.values()]]);
      const byToken = new Map(rows.map((row) => [row.token_hash, row]));
      const taken = new Map<string, number>();
      for (const waiting of batch) {
        const row = byToken.get(waiting.tokenHash);
        if (!row) {
          waiting.settle({});
          continue;
        }
        const before = taken.get(waiting.tokenHash) ?? 0;
        taken.set(waiting.tokenHash, before + 1);
        const leased = leasing.get(waiting.tokenHash) ?? 0;
        // The batch's requests take the numbers below the lease's, in arrival order.
        const points = row.points - leased - asked.get(waiting.tokenHash)! + before + 1;
        waiting.settle({ tenant: tenantOfRow(row, waiting.tokenHash), points, msBeforeNext: Math.max(0, Number(row.ms_before_next)) });
      }
      for (const row of rows) {
        const leased = leasing.get(row.token_hash) ?? 0;
        leases.counted(row.token_hash, { tenant: tenantOfRow(row, row.token_hash), points: row.points, leased, key: `${keyPrefix}:${row.token_hash}`, expire: row.expire, msBeforeNext: Math.max(0, Number(row.ms_before_next)), clockMovesBefore });
      }
    } catch (error) {
      for (const waiting of batch) waiting.fail(error);
    } finally {
      busy = false;
      void flush();
    }
  }

  return (tokenHash) => {
    const leased = leases.take(tokenHash, Date.now());
    if (leased) return leased;
    return new Promise<Verdict>((settle, fail) => {
      queue.push({ tokenHash, settle, fail });
      void flush();
    });
  };
}

// The sandbox clock comes with the token: every rule of time of the request reads it.
const tenantOfRow = (row: Row, tokenHash: string): Tenant => ({
  organizationId: row.organization_id,
  environment: row.environment,
  tokenHash,
  tokenId: row.token_id,
  clockOffsetMs: Number(row.offset_ms ?? 0),
});

/** The 401 of a request with no token, or one that is not (or no longer) an organization's. */
const unauthenticated = () => new ApiError('unauthenticated', 'No valid access token was given.');

/** Sets `res.locals.tenant` and consumes one point of the token's quota, or answers 401 / 429. */
export function authenticateAndLimit(db: Knex, { points: limit, durationSeconds, keyPrefix }: RateLimitOptions): RequestHandler {
  const count = tokenCounter(db, keyPrefix, durationSeconds * 1000, tokenLeases(db, limit));
  /** The request admitted (next()) or refused (next(error)) by its verdict. */
  const admit = (res: Response, verdict: Verdict, next: NextFunction): void => {
    if (!verdict.tenant) return next(unauthenticated());
    res.locals.tenant = verdict.tenant;
    workIsFor(verdict.tenant.organizationId, verdict.tenant.environment);
    setRateLimitHeaders(res, limit, limit - verdict.points, verdict.msBeforeNext);
    if (verdict.points <= limit) return next();
    const retryAfter = Math.max(1, Math.ceil(verdict.msBeforeNext / 1000));
    next(new ApiError('rate_limited', `Too many requests. Try again in ${retryAfter} seconds.`, undefined, { 'Retry-After': String(retryAfter) }));
  };
  // A token served from its lease goes on at once, with no promise made; one counted by the
  // statement goes on when the statement answers.
  return (req, res, next) => {
    const match = BEARER.exec(req.get('authorization') ?? '');
    if (!match) return next(unauthenticated());
    let verdict: Verdict | Promise<Verdict>;
    try {
      verdict = count(hashToken(match[1]!));
    } catch (error) {
      return next(error);
    }
    if (verdict instanceof Promise) verdict.then((known) => admit(res, known, next)).catch(next);
    else admit(res, verdict, next);
  };
}
