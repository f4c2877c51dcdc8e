/**
 * One log line per request, written when its answer is finished (or the connection closed):
 * the request id, method and path (never headers, which carry the token, nor bodies, which
 * carry card numbers), the status and the time taken. The id is the caller's X-Request-Id when
 * well-formed, else a new UUID, and is answered back in X-Request-Id.
 *
 * pino-http did this before, but it made two child loggers for every request (each serializing
 * and redacting its bindings at once), which cost more CPU than the line itself; here the line
 * is one call, and a child logger for the request is made only when something asks for it (the
 * error handler, through `requestLogger`).
 */
import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { requestId } from '../kernel/logging';
import { metricsEnabled, observeRequest } from '../observability/metrics';
import { runAsWork, type Work } from '../observability/work-context';

interface LoggedFields {
  id: string;
  method: string;
  path: string;
}

/**
 * Each request's fields, for the error handler's logger. Kept beside the request, not on it:
 * a property added to every request (or answer) object made every later step of the request
 * read them more slowly (about 14 µs a request in a micro-benchmark of the chain).
 */
const logged = new WeakMap<Request, LoggedFields>();

/** A logger whose lines carry the request's id, method and path (the error handler's). */
export function requestLogger(req: Request, logger: Logger): Logger {
  const fields = logged.get(req);
  return fields ? logger.child({ req: fields }) : logger;
}

/**
 * The route template of a request, for the duration histogram's label: the operation the
 * document matched (`/api/v1/customers/{id}`, `/portal/s/{token}/accounts`), else the Express
 * route (`/:code`), else `unmatched` (a 404, or a request refused before its route was matched,
 * such as a 401): never the path itself, whose ids are unbounded.
 */
function routeOf(req: Request): string {
  const matched = (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
  if (matched) return matched;
  if (typeof req.route?.path === 'string') return req.route.path;
  return 'unmatched';
}

export function requestLog(logger: Logger, logPath: (url: string) => string): RequestHandler {
  // The line holds nothing secret (an id, the method, a path without its query and with link
  // codes hidden, the status, the time), so it skips the logger's redaction pass: its wildcard
  // paths walk every object of every line, and cost three times the line itself. Every other
  // line, the error handler's included, is still redacted.
  const lines = logger.child({}, { redact: [] });
  return (req, res, next) => {
    const started = performance.now();
    const id = requestId(req.headers['x-request-id'], randomUUID);
    const fields: LoggedFields = { id, method: req.method, path: logPath(req.url) };
    logged.set(req, fields);
    res.setHeader('X-Request-Id', id);
    // Every line of the request's work carries its id, and its organization once authenticated.
    const work: Work = { requestId: id };
    // 'close' comes last, after 'finish' when the answer was sent, alone when the connection
    // went first; and once. What it logs is its own (a closure), not properties of the answer.
    // Run in the request's context, so that its line carries the request's trace id too. One
    // AsyncResource of our own rather than AsyncResource.bind: on Node 20, bind also defines an
    // `asyncResource` property on the function with two deprecation wrappers, made anew for
    // every request (3-4 % of the API chain's CPU in a profile of bench:api-chain).
    runAsWork(work, () => {
      const scope = new AsyncResource('dcs.request-log');
      const log = () => {
        const elapsed = performance.now() - started;
        if (metricsEnabled()) observeRequest(req.method, routeOf(req), res.statusCode, elapsed / 1000);
        const line = { req: fields, res: { statusCode: res.statusCode }, responseTime: Math.round(elapsed) };
        if (res.statusCode >= 500) lines.error(line, 'request errored');
        else if (!res.writableFinished) lines.info(line, 'request aborted');
        else lines.info(line, 'request completed');
      };
      res.on('close', () => scope.runInAsyncScope(log));
      next();
    });
  };
}
