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
 * It must start before express, http, pg, knex, undici and pino are first loaded, since the
 * instrumentations patch them as they load: server/main.ts imports observability/preload.ts
 * first of all.
 */
import { NodeSDK } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { KnexInstrumentation } from '@opentelemetry/instrumentation-knex';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';

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

let sdk: NodeSDK | undefined;

/** Starts the SDK when asked (once); answers whether traces are on. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): boolean {
  if (sdk) return true;
  if (!tracesWanted(env)) return false;
  env.OTEL_SERVICE_NAME ||= 'debt-collection-service';
  env.OTEL_METRICS_EXPORTER ||= 'none';
  env.OTEL_LOGS_EXPORTER ||= 'none';
  sdk = new NodeSDK({
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? '').split('?')[0]!) }),
      // Routers only: a span for each middleware of every request (a dozen, each a few µs of
      // work) cost more than the request's own statements, and says nothing the request's span
      // and its SQL do not. The API's route is named by observability/trace-route.ts.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.REQUEST_HANDLER] }),
      // Only statements inside a request's or a job's span: the job queue's polling (several
      // statements a second whatever the load) would otherwise be a trace each. No span for
      // taking a connection from the pool: the statement's own span holds the wait.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new KnexInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // trace_id and span_id on every log line written inside a span; the lines stay on stdout.
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  return true;
}

/** Sends the spans still buffered, then stops; a stop of the process waits for it (bounded by the caller). */
export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}
