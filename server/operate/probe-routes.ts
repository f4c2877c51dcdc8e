/**
 * The operating endpoints served beside /api/v1 (openapi/operate.yaml): GET /livez, GET /readyz
 * and GET /metrics. No bearer token of an organization; /metrics asks for METRICS_TOKEN when it
 * is set. Probes and scrapes are not logged line by line (a load balancer probes every few
 * seconds), and make no trace.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Knex } from 'knex';
import type { Readiness } from './readiness';
import { refreshDatabaseGauges } from './database-gauges';
import { registry } from '../observability/metrics';

export const PROBE_PATHS = new Set(['/livez', '/readyz']);
export const METRICS_PATH = '/metrics';

type Answer = ServerResponse;

function json(res: Answer, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...extra });
  res.end(text);
}

/** GET /livez: the process answers. Nothing else is asked: a process stuck on its database is not restarted for it. */
export function answerLivez(res: Answer): void {
  json(res, 200, { status: 'ok' });
}

/** GET /readyz: 200 when ready, 503 (with what is not) otherwise. */
export async function answerReadyz(res: Answer, readiness: Readiness): Promise<void> {
  const report = await readiness.report();
  json(res, report.status === 'ready' ? 200 : 503, report);
}

/** The bearer token a scrape must send, compared in constant time. */
function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const match = /^Bearer ([^\s]+)$/.exec(String(req.headers.authorization ?? ''));
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** GET /metrics in Prometheus text; 401 without the METRICS_TOKEN when one is set. */
export async function answerMetrics(req: IncomingMessage, res: Answer, db: Knex, token: string | undefined): Promise<void> {
  if (!authorized(req, token)) {
    json(res, 401, { error: 'No valid metrics token was given.', errorCode: 'unauthenticated' }, { 'www-authenticate': 'Bearer' });
    return;
  }
  await refreshDatabaseGauges(db);
  const text = await registry.metrics();
  res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
  res.end(text);
}

/** Only GET (and HEAD) are served at these paths. */
export function methodAllowed(req: IncomingMessage, res: Answer): boolean {
  if (req.method === 'GET' || req.method === 'HEAD') return true;
  json(res, 405, { error: `${req.method} is not allowed here.`, errorCode: 'method_not_allowed' }, { allow: 'GET, HEAD' });
  return false;
}
