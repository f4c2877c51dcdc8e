import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { hashToken } from '../crypto/secrets';
import { ApiError } from './errors';

export type Environment = 'production' | 'sandbox';

/** Who is asking: one organization in one environment. Every repo call is scoped by it. */
export interface Tenant {
  organizationId: string;
  environment: Environment;
  /** Hash of the token used; the rate limit counts per token. */
  tokenHash: string;
  /**
   * How far the sandbox clock of the organization is ahead of real time (0 in production,
   * and where it was not loaded): read with `nowFor` (server/sandbox/sandbox-clock.ts).
   */
  clockOffsetMs?: number;
}

// RFC 7235: the scheme is case-insensitive (`bearer`, `BEARER`); the token is not.
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i;

export function authenticate(db: Knex): RequestHandler {
  return async (req, res, next) => {
    try {
      const match = BEARER.exec(req.get('authorization') ?? '');
      if (!match) throw new ApiError('unauthenticated', 'No valid access token was given.');
      const tokenHash = hashToken(match[1]!);
      // The sandbox clock comes with the token, in the same query: every rule of time of the
      // request reads it without another round trip.
      const row = await db('api_tokens')
        .leftJoin('sandbox_clocks', function sandboxOnly() {
          this.on('sandbox_clocks.organization_id', 'api_tokens.organization_id').andOnVal('api_tokens.environment', '=', 'sandbox');
        })
        .select('api_tokens.organization_id', 'api_tokens.environment', 'sandbox_clocks.offset_ms')
        .where({ token_hash: tokenHash })
        .whereNull('revoked_at')
        .first();
      if (!row) throw new ApiError('unauthenticated', 'No valid access token was given.');
      const tenant: Tenant = { organizationId: row.organization_id, environment: row.environment, tokenHash, clockOffsetMs: Number(row.offset_ms ?? 0) };
      res.locals.tenant = tenant;
      next();
    } catch (error) {
      next(error);
    }
  };
}

export function tenantOf(res: { locals: Record<string, unknown> }): Tenant {
  return res.locals.tenant as Tenant;
}
