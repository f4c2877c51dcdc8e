/**
 * What a piece of work is, carried through its async calls (AsyncLocalStorage): the request's
 * id or the job's, and once known the organization and environment it is for. Every log line
 * written inside it carries these (the logger's mixin, logging.ts), with the trace id when
 * traces are on: trace_id, span_id and trace_flags, the names the pino instrumentation writes
 * (added here unless that instrumentation is loaded, telemetry.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { trace } from '@opentelemetry/api';

export interface Work {
  /** A request's id (X-Request-Id) … */
  requestId?: string;
  /** … or a job's, with its queue. */
  jobId?: string;
  queue?: string;
  organizationId?: string;
  environment?: string;
}

const storage = new AsyncLocalStorage<Work>();

/** Runs `fn` as `work`: log lines written by it and by what it awaits say so. */
export function runAsWork<T>(work: Work, fn: () => T): T {
  return storage.run(work, fn);
}

/** The work in hand, if any. */
export function currentWork(): Work | undefined {
  return storage.getStore();
}

/** Names the tenant of the work in hand once it is known (after authentication, or from a job's data). */
export function workIsFor(organizationId: string, environment: string): void {
  const work = storage.getStore();
  if (work) {
    work.organizationId = organizationId;
    work.environment = environment;
  }
}

let traceFields = false;

/** Whether log lines carry the span in hand's ids (set once, as traces start). */
export function traceFieldsInLogLines(on: boolean): void {
  traceFields = on;
}

/** The fields of the work in hand for a log line (pino's mixin), and of the span in hand. */
export function workFields(): Record<string, string> {
  const fields: Record<string, string> = {};
  if (traceFields) {
    const span = trace.getActiveSpan()?.spanContext();
    if (span && trace.isSpanContextValid(span)) {
      fields.trace_id = span.traceId;
      fields.span_id = span.spanId;
      fields.trace_flags = `0${span.traceFlags.toString(16)}`;
    }
  }
  const work = storage.getStore();
  if (!work) return fields;
  if (work.requestId) fields.request_id = work.requestId;
  if (work.jobId) fields.job_id = work.jobId;
  if (work.queue) fields.queue = work.queue;
  if (work.organizationId) fields.organization_id = work.organizationId;
  if (work.environment) fields.environment = work.environment;
  return fields;
}
