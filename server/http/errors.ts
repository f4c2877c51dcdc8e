import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import type { components } from '../../generated/schema';

export type ErrorCode = components['schemas']['ErrorCode'];
export type FieldErrors = components['schemas']['FieldErrors'];

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthenticated: 401,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  payment_gateway_unavailable: 400,
  card_declined: 400,
  insufficient_funds: 400,
  expired_card: 400,
  incorrect_cvc: 400,
  processing_error: 400,
  idempotency_key_reused: 422,
  idempotency_key_in_use: 409,
};

/** The one error type of the service: what the client is told, and nothing more. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly errorCode: ErrorCode,
    message: string,
    readonly fieldErrors?: FieldErrors,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[errorCode];
  }

  static notFound(what: string): ApiError {
    return new ApiError('not_found', `${what} not found.`);
  }

  static invalid(fieldErrors: FieldErrors, message = 'The given data was invalid.'): ApiError {
    return new ApiError('validation_failed', message, fieldErrors);
  }

  static field(field: string, message: string): ApiError {
    return ApiError.invalid({ [field]: [message] });
  }

  static conflict(message: string): ApiError {
    return new ApiError('conflict', message);
  }

  body(): Record<string, unknown> {
    return this.fieldErrors
      ? { error: this.message, errorCode: this.errorCode, errors: this.fieldErrors }
      : { error: this.message, errorCode: this.errorCode };
  }
}

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

function fromValidator(error: ValidatorError): ApiError | undefined {
  if (error.status === 400 && Array.isArray(error.errors)) {
    const fields: FieldErrors = {};
    for (const issue of error.errors) {
      const key = fieldPath(issue.path);
      (fields[key] ??= []).push(issue.message ?? 'is invalid');
    }
    return ApiError.invalid(fields);
  }
  if (error.status === 404) return new ApiError('not_found', 'No such route.');
  if (error.status === 405) return new ApiError('method_not_allowed', 'This path does not accept that method.');
  if (error.status === 415) return new ApiError('unsupported_media_type', 'The body must be application/json.');
  if (error.status === 413 || error.type === 'entity.too.large') return new ApiError('payload_too_large', 'The body is too large.');
  if (error.type === 'entity.parse.failed') return new ApiError('bad_request', 'The request body is not valid JSON.');
  if (error.status === 401) return new ApiError('unauthenticated', 'No valid access token was given.');
  return undefined;
}

/** Turns every failure into the spec's body; anything unexpected is logged and answered a bare 500. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const apiError = err instanceof ApiError ? err : fromValidator(err as ValidatorError);
    if (apiError) {
      res.status(apiError.status).set(apiError.headers).json(apiError.body());
      return;
    }
    const log = (req as { log?: Logger }).log ?? logger;
    log.error({ err }, 'request failed');
    if (res.headersSent) return;
    res.status(500).json({ error: 'Internal server error.', errorCode: 'internal_error' });
  };
}
