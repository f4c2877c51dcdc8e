/**
 * OpenTelemetry traces, off unless the standard variables ask for an exporter: the SDK starts
 * when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, or
 * OTEL_TRACES_EXPORTER names one (otlp, console, zipkin); OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none keeps it off. Everything else is the SDK's own reading of the
 * standard OTEL_* variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES…).
 *
 * Traces only: metrics are Prometheus text at /metrics (observability/metrics.ts) and logs are
 * pino's lines on stdout, so the SDK's own metric and log exporters stay off unless their
 * OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER are set.
 *
 * Which instrumentations patch their module (instrumentationsWanted): http, express, pg and
 * undici unless OTEL_NODE_DISABLED_INSTRUMENTATIONS names them; knex and pino only when
 * OTEL_NODE_ENABLED_INSTRUMENTATIONS names them (the variables and names of the OpenTelemetry
 * Node auto-instrumentation). Why those two wait to be asked, measured by `npm run bench:api --
 * --watching`:
 * - knex: every statement of ours goes through knex to pg, so with both each statement was two
 *   spans with the same SQL, and knex's patch of every query builder cost on every statement
 *   whether traced or not. The pg span alone has the statement, its time on the connection, and
 *   pg-boss's own statements too (which do not go through knex).
 * - pino: its mixin wrapped ours on every log line; ours adds the same trace_id, span_id and
 *   trace_flags itself (work-context.ts) for less.
 *
 * It must start before express, http, pg, knex, undici and pino are first loaded, since the
 * instrumentations patch them as they load: server/main.ts imports observability/preload.ts
 * first of all.
 */
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { KnexInstrumentation } from '@opentelemetry/instrumentation-knex';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { traceFieldsInLogLines } from './work-context';

/** The paths whose requests make no span: probes and scrapes, every few seconds, tell nothing. */
const UNTRACED = new Set(['/livez', '/readyz', '/metrics', '/health']);

/** Whether the environment asks for traces. */
export function tracesWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  const flag = (name: string) => (env[name] ?? '').trim().toLowerCase();
  if (flag('OTEL_SDK_DISABLED') === 'true') return false;
  const exporters = flag('OTEL_TRACES_EXPORTER');
  if (exporters === 'none') return false;
  return exporters !== '' || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Every instrumentation this service can load, by its short name; `on`: loaded unless disabled. */
const INSTRUMENTATIONS = {
  http: { on: true, make: () => new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? '').split('?')[0]!) }) },
  // No span for any layer: a span for each middleware of every request (a dozen, each a few µs
  // of work) cost more than the request's own statements, and says nothing the request's span
  // and its SQL do not. What it still does: name the request's span after the Express route
  // that answered it (the Portal's pages, /health); the API's operations are named by
  // observability/trace-route.ts.
  express: { on: true, make: () => new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.REQUEST_HANDLER, ExpressLayerType.ROUTER] }) },
  // Only statements inside a request's or a job's span: the job queue's polling (several
  // statements a second whatever the load) would otherwise be a trace each. No span for
  // taking a connection from the pool: the statement's own span holds the wait.
  pg: { on: true, make: () => new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }) },
  undici: { on: true, make: () => new UndiciInstrumentation({ requireParentforSpans: true }) },
  knex: { on: false, make: () => new KnexInstrumentation({ requireParentSpan: true }) },
  // trace_id and span_id on every log line written inside a span; the lines stay on stdout.
  pino: { on: false, make: () => new PinoInstrumentation({ disableLogSending: true }) },
} satisfies Record<string, { on: boolean; make: () => Instrumentation }>;

export type InstrumentationName = keyof typeof INSTRUMENTATIONS;

/**
 * The instrumentations to load: the default set, less those OTEL_NODE_DISABLED_INSTRUMENTATIONS
 * names, plus those OTEL_NODE_ENABLED_INSTRUMENTATIONS names (comma-separated short names:
 * `http`, `express`, `pg`, `undici`, `knex`, `pino`; unknown names are ignored).
 */
export function instrumentationsWanted(env: NodeJS.ProcessEnv = process.env): InstrumentationName[] {
  const names = (variable: string) => new Set((env[variable] ?? '').split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
  const enabled = names('OTEL_NODE_ENABLED_INSTRUMENTATIONS');
  const disabled = names('OTEL_NODE_DISABLED_INSTRUMENTATIONS');
  return (Object.keys(INSTRUMENTATIONS) as InstrumentationName[]).filter((name) => (INSTRUMENTATIONS[name].on || enabled.has(name)) && !disabled.has(name));
}

let sdk: NodeSDK | undefined;

/** Starts the SDK when asked (once); answers whether traces are on. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): boolean {
  if (sdk) return true;
  if (!tracesWanted(env)) return false;
  env.OTEL_SERVICE_NAME ||= 'debt-collection-service';
  env.OTEL_METRICS_EXPORTER ||= 'none';
  env.OTEL_LOGS_EXPORTER ||= 'none';
  const names = instrumentationsWanted(env);
  // The log lines' trace ids: the pino instrumentation's when it is loaded, else ours.
  traceFieldsInLogLines(!names.includes('pino'));
  sdk = new NodeSDK({ instrumentations: names.map((name) => INSTRUMENTATIONS[name].make()) });
  sdk.start();
  return true;
}

/** Sends the spans still buffered, then stops; a stop of the process waits for it (bounded by the caller). */
export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}
