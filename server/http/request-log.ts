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
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { requestId } from '../logging';

interface LoggedFields {
  id: string;
  method: string;
  path: string;
}

const FIELDS = Symbol('request log fields');
const STARTED = Symbol('request log start');

/** An answer as the request log left it. */
type Logged = Response & { [FIELDS]: LoggedFields; [STARTED]: number };

/** A logger whose lines carry the request's id, method and path (the error handler's). */
export function requestLogger(req: Request, logger: Logger): Logger {
  const fields = (req as Request & { [FIELDS]?: LoggedFields })[FIELDS];
  return fields ? logger.child({ req: fields }) : logger;
}

export function requestLog(logger: Logger, logPath: (url: string) => string): RequestHandler {
  // The line holds nothing secret (an id, the method, a path without its query and with link
  // codes hidden, the status, the time), so it skips the logger's redaction pass: its wildcard
  // paths walk every object of every line, and cost three times the line itself. Every other
  // line, the error handler's included, is still redacted.
  const lines = logger.child({}, { redact: [] });
  // One listener for every answer (no closure made per request): what it logs sits on the answer.
  function written(this: Logged): void {
    const line = { req: this[FIELDS], res: { statusCode: this.statusCode }, responseTime: Date.now() - this[STARTED] };
    if (this.statusCode >= 500) lines.error(line, 'request errored');
    else if (!this.writableFinished) lines.info(line, 'request aborted');
    else lines.info(line, 'request completed');
  }
  return (req, res, next) => {
    const started = Date.now();
    const id = requestId(req.headers['x-request-id'], randomUUID);
    const fields: LoggedFields = { id, method: req.method, path: logPath(req.url) };
    (req as { id?: string }).id = id;
    (req as Request & { [FIELDS]?: LoggedFields })[FIELDS] = fields;
    (res as Logged)[FIELDS] = fields;
    (res as Logged)[STARTED] = started;
    res.setHeader('X-Request-Id', id);
    // 'close' comes last, after 'finish' when the answer was sent, alone when the connection
    // went first; and once (`on`: no wrapper to make and remove for every request).
    res.on('close', written);
    next();
  };
}
