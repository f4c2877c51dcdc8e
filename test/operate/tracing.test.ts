/**
 * OpenTelemetry traces of a real server process, exported as OTLP/HTTP JSON to a collector this
 * test runs (the spans kept in memory): one POST /charges of an ACH debit followed into its SQL
 * spans and into the span of the settlement job that finished the charge, in the same trace;
 * the trace id on the log lines of that work. Without OTEL_* variables the process exports
 * nothing (the other operating tests run so).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from '../../server/db/database';
import { createOrganization } from '../../server/organizations/organization-repo';
import { newCustomer, newDebtAccount, testAch, unique } from '../support/fixtures';
import { processClient, startServerProcess, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { eventually } from '../support/webhooks';

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  links?: { traceId: string; spanId: string }[];
}

const spans: Span[] = [];
let collector: Server;
let collectorUrl: string;
let server: Spawned | undefined;
let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: Span[] }[] }[] };
        for (const resource of body.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans.push(...(scope.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => collector.listen(0, '127.0.0.1', done));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.killAll();
  await dropDatabase?.();
  await new Promise((done) => collector.close(done));
});

const attribute = (span: Span, key: string) => {
  const value = span.attributes?.find((each) => each.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? String(value.intValue) : undefined);
};
const statementOf = (span: Span) => attribute(span, 'db.query.text') ?? attribute(span, 'db.statement') ?? '';

/** Whether `span` descends from the span `ancestorId` (through the spans received). */
function descendsFrom(span: Span, ancestorId: string): boolean {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  for (let at: Span | undefined = span; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) {
    if (at.parentSpanId === ancestorId) return true;
  }
  return false;
}

test('one POST /charges followed into its SQL spans and into the settlement job span that finished the charge, one trace id throughout', async () => {
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  const db = connect(database.url, 1);
  const organization = await createOrganization(db, 'Acme Recovery LLC');
  await db.destroy();
  const started = await startServerProcess(database.url, {
    OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    OTEL_SERVICE_NAME: 'dcs-tracing-test',
    SANDBOX_ACH_SETTLEMENT_SECONDS: '0',
  });
  server = started.server;
  const api = processClient(started.port, organization.sandbox_token);

  const customer = await newCustomer(api);
  const account = await newDebtAccount(api, customer.id, { balance: 4000, external_id: unique('DA') });
  const { data, response } = await api.POST('/charges', { body: { amount: 4000, debt_account_id: account.id, ach: testAch('000123456789') }, headers: { 'x-request-id': 'traced-charge-1' } });
  expect(response.status).toBe(201);
  expect(data!.data.status).toBe('pending');
  const chargeId = data!.data.id;
  await eventually(async () => (await api.GET('/charges/{id}', { params: { path: { id: chargeId } } })).data?.data.status === 'succeeded' || undefined, 'the charge settled');

  // The request's server span (the http instrumentation's, kind SERVER = 2).
  const request = await eventually(() => spans.find((span) => span.kind === 2 && attribute(span, 'http.route') === '/api/v1/charges' && (attribute(span, 'http.request.method') ?? attribute(span, 'http.method')) === 'POST'), 'the POST /charges span');
  const trace = request.traceId;
  // Its SQL: the charge inserted, under the request's span.
  const insert = spans.find((span) => span.traceId === trace && /insert into "?charges"?/i.test(statementOf(span)));
  expect(insert).toBeDefined();
  expect(descendsFrom(insert!, request.spanId)).toBe(true);
  // The settlement job that finished it: in the same trace, under the request, linked to it,
  // with SQL of its own that updates the charge.
  const job = await eventually(() => spans.find((span) => span.name === 'job ach-settlement' && span.traceId === trace), 'the settlement job span in the request\'s trace');
  expect(job.kind).toBe(5); // CONSUMER
  expect(descendsFrom(job, request.spanId)).toBe(true);
  expect(job.links?.some((link) => link.traceId === trace)).toBe(true);
  const settled = await eventually(() => spans.find((span) => span.traceId === trace && descendsFrom(span, job.spanId) && /update "?charges"?/i.test(statementOf(span))), 'the settlement job\'s update of the charge');
  expect(settled).toBeDefined();

  // The trace id on the log line of the request's work, with its id and tenant.
  const line = server
    .output()
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .find((entry) => entry.request_id === 'traced-charge-1' && entry.msg === 'request completed');
  expect(line).toMatchObject({ trace_id: trace, organization_id: organization.organization_id, environment: 'sandbox' });
  // Probes make no trace (the stop sends every span still buffered).
  await fetch(`http://127.0.0.1:${started.port}/readyz`);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  expect(spans.filter((span) => span.kind === 2).map((span) => attribute(span, 'url.path') ?? attribute(span, 'http.target'))).not.toContain('/readyz');
  expect(spans.filter((span) => span.kind === 2).map((span) => attribute(span, 'url.path') ?? attribute(span, 'http.target'))).toContain('/api/v1/charges');
}, 240_000);
