/**
 * Middlewares run one after the other as one: what every API request passes through is one
 * layer of the router instead of one layer each. The router's per-layer work (matching the
 * path, resetting `req.params`, watching a returned promise) was paid for every middleware
 * of every request; here it is paid once.
 *
 * The contract is Express's: a middleware calls `next()` to go on or `next(error)` to stop
 * with an error, or answers and calls neither; one that throws, or returns a promise that
 * rejects, stops with that error.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function chain(handlers: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return done(error);
      const handler = handlers[index++];
      if (!handler) return done();
      try {
        const result: unknown = handler(req, res, next);
        if (result instanceof Promise) result.catch(done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
