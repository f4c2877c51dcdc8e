/**
 * A job as one piece of work, followed from the request that caused it:
 * - Where jobs are enqueued (jobs/queue.ts `enqueueIn`, `enqueueManyIn`), the trace context in
 *   hand (W3C `traceparent`, and `tracestate` when there is one) is added to the job's data.
 *   With traces off nothing is added.
 * - Where jobs are worked (every `boss.work` handler, wrapped once in jobs/queue.ts), the
 *   handler runs inside a span `job <queue>` of kind consumer, whose parent is the enqueuing
 *   request's span (the job is part of the request's trace: one trace id from the POST to the
 *   job that finished its work) and which links to every job of its batch; and inside a work
 *   context, so that each log line of the job carries its job_id, queue, and its organization
 *   and environment when the job's data names them.
 *
 * The webhook delivery worker fetches its jobs itself (webhooks/delivery-worker.ts) and is not
 * wrapped: its attempts are counted (dcs_webhook_delivery_attempts_total) rather than traced.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link } from '@opentelemetry/api';
import type PgBoss from 'pg-boss';
import { runAsWork, type Work } from './work-context';

const tracer = trace.getTracer('debt-collection-service/jobs');

/** `data` with the trace context in hand, when there is one (traces on, inside a span). */
export function withTraceContext<T extends object>(data: T): T {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier.traceparent) return data;
  return { ...data, traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) };
}

type Carrier = Record<string, unknown>;

const carrierOf = (data: unknown): Carrier => (data && typeof data === 'object' ? (data as Carrier) : {});

/** The context a job's data carries (the root context when it carries none). */
const contextOf = (data: unknown) => propagation.extract(ROOT_CONTEXT, carrierOf(data), {
  get: (carrier, key) => (typeof carrier[key] === 'string' ? (carrier[key] as string) : undefined),
  keys: (carrier) => Object.keys(carrier),
});

/** The tenant a job's data names, if any (organizationId and environment, as most jobs carry them). */
function tenantOf(data: unknown): Pick<Work, 'organizationId' | 'environment'> {
  const { organizationId, environment } = carrierOf(data);
  return typeof organizationId === 'string' && typeof environment === 'string' ? { organizationId, environment } : {};
}

/** Runs a worker's handler for `jobs` of `queue` inside their span and work context. */
export function runJobs<T>(queue: string, jobs: readonly PgBoss.Job<unknown>[], handle: () => Promise<T>): Promise<T> {
  const [first] = jobs;
  const links: Link[] = [];
  for (const job of jobs) {
    const spanContext = trace.getSpanContext(contextOf(job.data));
    if (spanContext) links.push({ context: spanContext });
  }
  const parent = first ? contextOf(first.data) : ROOT_CONTEXT;
  const work: Work = { jobId: first?.id, queue, ...tenantOf(first?.data) };
  const attributes = { 'messaging.system': 'pg-boss', 'messaging.destination.name': queue, 'messaging.batch.message_count': jobs.length, ...(first ? { 'messaging.message.id': first.id } : {}) };
  return runAsWork(work, () =>
    tracer.startActiveSpan(`job ${queue}`, { kind: SpanKind.CONSUMER, links, attributes }, parent, async (span) => {
      try {
        return await handle();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
        throw error;
      } finally {
        span.end();
      }
    }),
  );
}

/** Wraps every handler `boss.work` is given from now on (once per queue instance). */
export function traceWorkers(boss: PgBoss): void {
  const work = boss.work.bind(boss) as (...args: unknown[]) => Promise<string>;
  (boss as { work: unknown }).work = (name: string, ...rest: unknown[]) => {
    const handler = rest.pop() as (jobs: PgBoss.Job<unknown>[]) => Promise<unknown>;
    return work(name, ...rest, (jobs: PgBoss.Job<unknown>[]) => runJobs(name, jobs, () => handler(jobs)));
  };
}
