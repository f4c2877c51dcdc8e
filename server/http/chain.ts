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

interface Run {
  handlers: RequestHandler[];
  index: number;
  req: Request;
  res: Response;
  done: NextFunction;
  next: NextFunction;
}

function step(this: Run, error?: unknown): void {
  if (error !== undefined && error !== null) return this.done(error);
  const handler = this.handlers[this.index++];
  if (!handler) return this.done();
  try {
    const result: unknown = handler(this.req, this.res, this.next);
    if (result instanceof Promise) result.catch(this.done);
  } catch (thrown) {
    this.done(thrown);
  }
}

export function chain(handlers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    const run = { handlers, index: 0, req, res, done } as Run;
    // A bound function, not a closure per request: the loader names every closure it makes.
    run.next = step.bind(run) as NextFunction;
    run.next();
  };
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * `handler` for one method and path only, as a route of the router would be: the path (under
 * the chain's mount) matched whatever its case, with or without a trailing slash. Any other
 * request goes on at once.
 */
export function onlyAt(method: string, path: string, handler: RequestHandler): RequestHandler {
  const at = new RegExp(`^${escaped(path)}\\/?$`, 'i');
  return (req, res, next) => (req.method === method && at.test(req.path) ? handler(req, res, next) : next());
}
