import pino, { type Logger } from 'pino';
import { workFields } from '../observability/work-context';

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

/** How long a log line may wait in the buffer at most. */
const FLUSH_MS = 100;
const destinations = new Map<number | string, ReturnType<typeof pino.destination>>();

/**
 * Where log lines go (stdout unless told): kept in a buffer and written 4 KB at a time, at
 * least every FLUSH_MS, and at once when the process exits (a crash's last line included).
 * One write of many lines instead of one write for each: a busy server wrote one line per
 * request, a system call each. A process killed outright (SIGKILL) loses at most the last
 * FLUSH_MS of lines.
 */
export function logDestination(dest: number | string = 1): pino.DestinationStream {
  // One buffer per destination in a process, however many loggers write to it.
  const known = destinations.get(dest);
  if (known) return known;
  const stream = pino.destination({ dest, sync: true, minLength: 4096 });
  destinations.set(dest, stream);
  const flush = () => {
    try {
      stream.flushSync();
    } catch {
      // Closed or not open yet: nothing to write.
    }
  };
  setInterval(flush, FLUSH_MS).unref();
  process.once('exit', flush);
  return stream;
}

/**
 * Every line written inside a request's or a job's work carries its request_id (or job_id and
 * queue), organization_id and environment (observability/work-context.ts); with traces on, the
 * pino instrumentation adds trace_id and span_id beside them.
 */
export function createLogger(level: string, destination: pino.DestinationStream = logDestination()): Logger {
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, mixin: workFields }, destination);
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
