/**
 * One log line per request, written when its answer is finished (or the connection closed):
 * the request id, method and path (never headers, which carry the token, nor bodies, which
 * carry card numbers), the status and the time taken. The id is the caller's X-Request-Id when
 * well-formed, else a new UUID, and is answered back in X-Request-Id.
 *
 * pino-http did this before, but it made two child loggers for every request (each serializing
 * and redacting its bindings at once), which cost more CPU than the line itself; here the line
 * is one call, and the request's own child logger (`req.log`) is made only when something asks
 * for it (the error handler).
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { requestId } from '../logging';

export function requestLog(logger: Logger, logPath: (url: string) => string): RequestHandler {
  return (req, res, next) => {
    const started = Date.now();
    const id = requestId(req.headers['x-request-id'], randomUUID);
    const fields = { id, method: req.method, path: logPath(req.url) };
    (req as { id?: string }).id = id;
    res.setHeader('X-Request-Id', id);
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= logger.child({ req: fields })) });
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const line = { req: fields, res: { statusCode: res.statusCode }, responseTime: Date.now() - started };
      if (res.statusCode >= 500) logger.error(line, 'request errored');
      else if (!res.writableFinished) logger.info(line, 'request aborted');
      else logger.info(line, 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
