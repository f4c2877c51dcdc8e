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
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { requestId } from '../logging';

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

export function requestLog(logger: Logger, logPath: (url: string) => string): RequestHandler {
  // The line holds nothing secret (an id, the method, a path without its query and with link
  // codes hidden, the status, the time), so it skips the logger's redaction pass: its wildcard
  // paths walk every object of every line, and cost three times the line itself. Every other
  // line, the error handler's included, is still redacted.
  const lines = logger.child({}, { redact: [] });
  return (req, res, next) => {
    const started = Date.now();
    const id = requestId(req.headers['x-request-id'], randomUUID);
    const fields: LoggedFields = { id, method: req.method, path: logPath(req.url) };
    logged.set(req, fields);
    res.setHeader('X-Request-Id', id);
    // 'close' comes last, after 'finish' when the answer was sent, alone when the connection
    // went first; and once. What it logs is its own (a closure), not properties of the answer.
    res.on('close', () => {
      const line = { req: fields, res: { statusCode: res.statusCode }, responseTime: Date.now() - started };
      if (res.statusCode >= 500) lines.error(line, 'request errored');
      else if (!res.writableFinished) lines.info(line, 'request aborted');
      else lines.info(line, 'request completed');
    });
    next();
  };
}
