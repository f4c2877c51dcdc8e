import type { components } from '../../generated/schema';

export type ErrorCode = components['schemas']['ErrorCode'];
export type FieldErrors = components['schemas']['FieldErrors'];

/** The status of each code; the first code of a status is its general one. */
export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  csrf_token_invalid: 403,
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
  account_disputed: 409,
  processor_not_configured: 409,
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
