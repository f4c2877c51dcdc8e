/**
 * Prometheus metrics (prom-client), one registry per process, served at GET /metrics
 * (metrics-route.ts). Every label has a bounded set of values: route templates, never paths
 * with ids; statuses, processors, queues and lanes; never an organization.
 *
 * Two kinds:
 * - Counted here, per process, as things happen: requests (a histogram), the gateway's answers
 *   to charges, recoveries, webhook attempts, messages to debtors, failed statements. Several
 *   processes each count their own and Prometheus sums them (`sum by (…) (rate(…))`).
 * - Read from the database at each scrape (database-gauges.ts): what is waiting or in flight
 *   across every process and organization (charges processing, queues, undelivered events).
 *   Every process answers the same values for these: aggregate them with `max`, not `sum`.
 *
 * The counting calls are plain functions (`countCommunication`, …) so that the rooms that do
 * the work call one line and import nothing else; with METRICS_ENABLED=false they cost a check.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export const registry = new Registry();

let enabled = false;
let defaultsCollected = false;

/** Turns counting on (server start, when METRICS_ENABLED is not false); the Node defaults with it, once. */
export function enableMetrics(): void {
  enabled = true;
  if (!defaultsCollected) {
    defaultsCollected = true;
    collectDefaultMetrics({ register: registry });
  }
}

export const metricsEnabled = (): boolean => enabled;

const httpDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'Time from a request arriving to its answer finished (or its connection closed), by method, route template and status class.',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * The histogram's series by `method route status_class`, each looked up once: prom-client's
 * observe with labels hashes them (keys sorted, joined) on every call. Bounded as the labels
 * are: methods × route templates × five classes.
 */
const durationSeries = new Map<string, { observe(seconds: number): void }>();

/** One request answered: `route` is a template (or `unmatched`), never the path itself. */
export function observeRequest(method: string, route: string, status: number, seconds: number): void {
  if (!enabled) return;
  const known = METHODS.has(method) ? method : 'OTHER';
  const statusClass = `${Math.floor(status / 100)}xx`;
  const key = `${known} ${route} ${statusClass}`;
  let series = durationSeries.get(key);
  if (!series) {
    series = httpDuration.labels({ method: known, route, status_class: statusClass });
    durationSeries.set(key, series);
  }
  series.observe(seconds);
}

const chargesAnswered = new Counter({
  name: 'dcs_charges_answered_total',
  help: "Charges recorded from the gateway's answer (or from recovery's), by the status it gave them, the processor and where the charge came from (api, payment_plan: an instalment, autopay, settlement_offer).",
  labelNames: ['status', 'processor', 'source'] as const,
  registers: [registry],
});

/** Charges whose answer was just recorded (payments/charge-steps.ts, after its transaction committed). */
export function countChargesAnswered(charges: readonly { status: string; gateway: string; source: string }[]): void {
  if (!enabled) return;
  for (const charge of charges) chargesAnswered.inc({ status: charge.status, processor: charge.gateway, source: charge.source });
}

const recoveries = new Counter({
  name: 'dcs_charge_recoveries_total',
  help: 'Charges left processing that recovery finished from the gateway\'s own record of them.',
  registers: [registry],
});

export function countRecoveries(done: number): void {
  if (enabled && done > 0) recoveries.inc(done);
}

const deliveries = new Counter({
  name: 'dcs_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome: delivered, retry (failed, to be tried again), failed (for good), postponed (the endpoint asked to wait), cancelled (the webhook was disabled).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export function countDeliveryAttempt(outcome: string): void {
  if (enabled) deliveries.inc({ outcome });
}

const communications = new Counter({
  name: 'dcs_communications_total',
  help: 'Messages to debtors by what became of them: sent, held (for quiet hours), suppressed (opted out, or the customer deleted), failed; with the reason the log records.',
  labelNames: ['outcome', 'reason'] as const,
  registers: [registry],
});

/** A message to a debtor queued, held, suppressed, sent or failed (communications/). */
export function countCommunication(outcome: 'queued' | 'held' | 'suppressed' | 'sent' | 'logged' | 'failed', reason?: string | null): void {
  if (enabled) communications.inc({ outcome, reason: reason ?? '' });
}

const statementErrors = new Counter({
  name: 'dcs_db_statement_errors_total',
  help: "Statements the server's pool ran that failed, by SQLSTATE class (23: a constraint, 40: a serialization failure or deadlock, 57: the server shutting down, 08: the connection).",
  labelNames: ['sqlstate_class'] as const,
  registers: [registry],
});

export function countStatementError(code: string | undefined): void {
  if (enabled) statementErrors.inc({ sqlstate_class: /^[0-9A-Z]{5}$/.test(code ?? '') ? code!.slice(0, 2) : 'none' });
}
