/**
 * RATE_LIMIT_PER_MINUTE per token, counted in PostgreSQL (rate-limiter-flexible) so that
 * every server process shares one count. Every answer carries the RateLimit-* headers; a
 * refused request gets 429 with Retry-After.
 */
import type { RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../kernel/errors';
import { tenantOf } from '../kernel/tenant';

export const RATE_LIMIT_TABLE = 'rate_limits';

export interface RateLimitOptions {
  points: number;
  durationSeconds: number;
  /** Counts of different limits must not share keys. */
  keyPrefix: string;
}

export function createLimiter(db: Knex, { points, durationSeconds, keyPrefix }: RateLimitOptions): RateLimiterPostgres {
  return new RateLimiterPostgres({
    storeClient: db,
    storeType: 'knex',
    tableName: RATE_LIMIT_TABLE,
    tableCreated: true,
    keyPrefix,
    points,
    duration: durationSeconds,
  });
}

export function setRateLimitHeaders(res: Response, limit: number, remaining: number, msBeforeNext: number): void {
  // Node's own setHeader: Express's res.set would look for a content type in each name.
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, remaining)));
  res.setHeader('RateLimit-Reset', String(Math.ceil(msBeforeNext / 1000)));
}

const setHeaders = (res: Response, limit: number, state: RateLimiterRes) => setRateLimitHeaders(res, limit, state.remainingPoints, state.msBeforeNext);

/** Consumes one point of `limiter` for the request's token; must run after authentication. */
export function rateLimit(limiter: RateLimiterPostgres, what = 'requests'): RequestHandler {
  return async (_req, res, next) => {
    const { tokenHash } = tenantOf(res);
    try {
      setHeaders(res, limiter.points, await limiter.consume(tokenHash));
      next();
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) return next(rejection);
      setHeaders(res, limiter.points, rejection);
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      next(
        new ApiError('rate_limited', `Too many ${what}. Try again in ${retryAfter} seconds.`, undefined, {
          'Retry-After': String(retryAfter),
        }),
      );
    }
  };
}
