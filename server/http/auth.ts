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
}

// RFC 7235: the scheme is case-insensitive (`bearer`, `BEARER`); the token is not.
export const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i;

export function authenticate(db: Knex): RequestHandler {
  return async (req, res, next) => {
    try {
      const match = BEARER.exec(req.get('authorization') ?? '');
      if (!match) throw new ApiError('unauthenticated', 'No valid access token was given.');
      const tokenHash = hashToken(match[1]!);
      const row = await db('api_tokens')
        .select('organization_id', 'environment')
        .where({ token_hash: tokenHash })
        .whereNull('revoked_at')
        .first();
      if (!row) throw new ApiError('unauthenticated', 'No valid access token was given.');
      const tenant: Tenant = { organizationId: row.organization_id, environment: row.environment, tokenHash };
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
