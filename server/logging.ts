import pino, { type Logger } from 'pino';

/**
 * Paths that may hold a secret anywhere in a logged object. Request bodies are never logged,
 * and these are censored should one reach a log line by another road.
 */
const REDACT = [
  'req.headers.authorization',
  '*.authorization',
  '*.token',
  '*.card_number',
  '*.card_security_code',
  '*.account_number',
  '*.routing_number',
  '*.secret',
  '*.*.card_number',
  '*.*.card_security_code',
  '*.*.account_number',
  '*.*.routing_number',
  '*.*.secret',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}
