/**
 * The one error handler: ApiError and the libraries' errors (the validator's, body-parser's)
 * become the spec's body; anything else is logged and answered a bare 500.
 */
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError, STATUS, type ErrorCode, type FieldErrors } from '../kernel/errors';
import { requestLogger } from './request-log';

interface ValidatorIssue {
  path?: string;
  message?: string;
  errorCode?: string;
}

interface ValidatorError {
  status?: number;
  errors?: ValidatorIssue[];
  message?: string;
  type?: string;
  expose?: boolean;
}

/**
 * The validator's error path as the document's field key: `/body/address/postal_code` ->
 * `address.postal_code`, `/body/3/customer_id` -> `[3].customer_id`, `/query/limit` ->
 * `query.limit`, `/params/id` -> `path.id`; the body as a whole is `body`.
 */
export function fieldPath(raw: string | undefined): string {
  const parts = (raw ?? '').split(/[/.]/).filter((part) => part !== '');
  const [where, ...rest] = parts;
  const prefix = where === 'body' ? [] : where === 'query' || where === 'headers' ? [where] : where === 'params' || where === 'path' ? ['path'] : undefined;
  const segments = prefix === undefined ? parts : [...prefix, ...rest];
  const key = segments.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
  return key || 'body';
}

/** The general code of each status: the first listed (`bad_request` for 400, not a decline code). */
const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {};
for (const [code, status] of Object.entries(STATUS) as [ErrorCode, number][]) CODE_OF_STATUS[status] ??= code;

/** What each code tells the client when the error came from a library (its message may hold internals). */
const SENTENCE: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The request could not be read.',
  unauthenticated: 'No valid access token was given.',
  not_found: 'No such route.',
  method_not_allowed: 'This path does not accept that method.',
  payload_too_large: 'The body is too large.',
  unsupported_media_type: 'The body must be application/json, with no Content-Encoding or gzip, deflate or br.',
  validation_failed: 'The given data was invalid.',
};

const statusOf = (error: ValidatorError): number | undefined => {
  const status = error.status ?? (error as { statusCode?: number }).statusCode;
  return Number.isInteger(status) ? status : undefined;
};

export function fromValidator(error: ValidatorError): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = statusOf(error);
  if (status === 400 && Array.isArray(error.errors)) {
    // No prototype: a field named `constructor` or `__proto__` is a key like any other.
    const fields: FieldErrors = Object.create(null) as FieldErrors;
    for (const issue of error.errors) {
      const key = fieldPath(typeof issue?.path === 'string' ? issue.path : undefined);
      if (!Object.hasOwn(fields, key)) fields[key] = [];
      fields[key]!.push(typeof issue?.message === 'string' ? issue.message : 'is invalid');
    }
    return ApiError.invalid(fields);
  }
  if (status === 413 || error.type === 'entity.too.large') return new ApiError('payload_too_large', SENTENCE.payload_too_large!);
  if (error.type === 'entity.parse.failed') return new ApiError('bad_request', 'The request body is not valid JSON.');
  if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') return new ApiError('unsupported_media_type', SENTENCE.unsupported_media_type!);
  if (status === 415) return new ApiError('unsupported_media_type', 'The body must be application/json.');
  // RFC 9110 15.5.6: a 405 names the methods the path does accept.
  if (status === 405) {
    const allow = (error as { headers?: Record<string, unknown> }).headers?.Allow;
    return new ApiError('method_not_allowed', SENTENCE.method_not_allowed!, undefined, typeof allow === 'string' && allow ? { Allow: allow.toUpperCase() } : {});
  }
  // Any other client error of a library (a body that cannot be inflated, a path that cannot be
  // decoded, an aborted upload): its status, in our shape, with our sentence.
  if (status !== undefined && status >= 400 && status < 500) {
    const code = CODE_OF_STATUS[status] ?? 'bad_request';
    return new ApiError(code, SENTENCE[code] ?? 'The request could not be read.');
  }
  return undefined;
}

/** The request log's id, answered in X-Request-Id (http/request-log.ts). */
function requestIdOf(res: { getHeader(name: string): unknown }): string {
  const id = res.getHeader('x-request-id');
  return typeof id === 'string' || typeof id === 'number' ? String(id) : 'unknown';
}

/**
 * Turns every failure into the spec's body; anything unexpected is logged and answered a bare
 * 500 naming the request id. It cannot fail itself: whatever reaches it (a non-Error thrown,
 * an object with hostile keys, a response already started) ends in JSON or a closed socket,
 * never in Express's HTML page with a stack.
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    try {
      const apiError = err instanceof ApiError ? err : fromValidator(err as ValidatorError);
      if (apiError) {
        if (res.headersSent) return void res.end();
        res.status(apiError.status).set(apiError.headers).json(apiError.body());
        return;
      }
    } catch (failure) {
      err = failure;
    }
    const requestId = requestIdOf(res);
    try {
      requestLogger(req, logger).error({ err }, 'request failed');
    } catch {
      // Logging must not decide the answer.
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    try {
      res.removeHeader('content-encoding');
      res.status(500).json({ error: `Internal server error (request id ${requestId}).`, errorCode: 'internal_error' });
    } catch {
      res.destroy();
    }
  };
}
