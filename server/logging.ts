import pino, { type Logger } from 'pino';

/**
 * Paths that may hold a secret anywhere in a logged object. Request bodies are never logged,
 * and these are censored should one reach a log line by another road.
 */
const REDACT = [
  'req.headers.authorization',
  'authorization',
  'token',
  'card_number',
  'card_security_code',
  'account_number',
  'routing_number',
  'secret',
  'password',
  '*.authorization',
  '*.token',
  '*.card_number',
  '*.card_security_code',
  '*.account_number',
  '*.routing_number',
  '*.secret',
  '*.password',
  '*.*.card_number',
  '*.*.card_security_code',
  '*.*.account_number',
  '*.*.routing_number',
  '*.*.secret',
  '*.*.password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}

/** What a load balancer or tracer may send as X-Request-Id and we keep: short, printable, no spaces. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * The id of a request: the caller's X-Request-Id when well-formed, so traces follow a request
 * through the proxies in front of us; otherwise (absent, repeated, too long, odd characters
 * that could forge log lines) a new UUID.
 */
export function requestId(incoming: string | string[] | undefined, fresh: () => string): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : fresh();
}
