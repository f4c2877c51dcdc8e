/**
 * npm run bench:api-chain — the CPU the API's middleware costs per request, without the network
 * or the database: requests made in the process (IncomingMessage and ServerResponse with no
 * socket) for GET /customers/{id}, answered with one fixed customer, through
 * - a bare Express route;
 * - express-openapi-validator (request and answer checked against the document, as the
 *   service's `openApiValidator()` sets it up) in front of the same answer;
 * - the service's own chain as `server/app.ts` builds it (request log, text checks, the JSON
 *   gate, the validator, the idempotency step, dispatch by operation), with authentication
 *   replaced by a step that sets a tenant and the RateLimit headers (no database).
 * Rounds alternate their order; each figure is the median of the rounds' own differences in
 * CPU µs per request, so that a busy machine moves both sides of a difference alike. It is
 * steadier than `bench:api` under load, and shows the cost of a change to the validator patch
 * or to `server/http/` without the noise of the database and the load generator.
 *
 *   npm run bench:api-chain [-- --requests 20000 --rounds 9]
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import express, { type Express, type RequestHandler } from 'express';
import { API_BASE } from '../server/app';
import { chain, onlyAt } from '../server/http/chain';
import { openApiValidator } from '../server/http/validator';
import { requestLog } from '../server/http/request-log';
import { refuseUnstorablePath, refuseUnstorableText } from '../server/http/text';
import { setRateLimitHeaders } from '../server/http/rate-limit';
import { operationRoutes } from '../server/http/typed-routes';
import { parseInclude } from '../server/http/include';
import { idempotency } from '../server/idempotency/idempotency';
import { tenantOf } from '../server/kernel/tenant';
import { customerToApi } from '../server/customer-store/customer-mapper';
import { CUSTOMER_INCLUDES, DEFAULT_CUSTOMER_INCLUDES } from '../server/customers/customer-service';
import { createLogger, logDestination } from '../server/kernel/logging';
import { median } from './measure';

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '9' },
  },
});

const ID = '0b6f7f8e-2a53-4a3f-9a43-1f1d2b7c9e10';
const AT = new Date('2026-05-01T10:00:00Z');
const INCLUDE = new Set<string>(DEFAULT_CUSTOMER_INCLUDES);

/** A customer as the service answers it, made anew for every request as the service does. */
const answer = () =>
  customerToApi(
    { id: ID, external_id: 'CUST-100482', name: 'Maria Gonzalez', email: 'maria.gonzalez@debt-collection.example', email_source: 'debtor', email_work_address: false, email_creditor_notice_date: null, phone: null, date_of_birth: null, ssn_last4: null, metadata: { portfolio: 'spring-2026' }, time_zone: null, email_preference: 'allowed', email_preference_changed_at: null, email_preference_changed_by: null, created_at: AT, updated_at: AT },
    {
      include: INCLUDE,
      addresses: [{ id: '1b6f7f8e-2a53-4a3f-9a43-1f1d2b7c9e10', customer_id: ID, name: null, line1: null, line2: null, city: 'Austin', state: null, country: null, postal_code: '78704', is_primary: true, created_at: AT, updated_at: AT }],
      paymentMethods: [],
      debtAccounts: [],
      portalAccount: null,
    },
  );

function baseApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('etag', false);
  return app;
}

const bare = () => baseApp().get(`${API_BASE}/customers/:id`, (_req, res) => void res.json({ data: answer() }));

const validated = () => baseApp().use(API_BASE, chain([...openApiValidator(), (_req, res) => void res.json({ data: answer() })]));

/** `server/app.ts`'s chain for the API, authentication aside. */
function service(): Express {
  const app = baseApp();
  const logger = createLogger('info', logDestination('/dev/null'));
  const pass: RequestHandler = (_req, _res, next) => next();
  app.use(chain([requestLog(logger, (url) => url.split('?')[0]!), refuseUnstorablePath]));
  app.get('/health', (_req, res) => void res.json({ status: 'ok' }));
  const { routes, dispatch } = operationRoutes(API_BASE);
  routes.get('/customers/{id}', async (req, res) => {
    tenantOf(res);
    parseInclude(req.query.include, CUSTOMER_INCLUDES, DEFAULT_CUSTOMER_INCLUDES);
    res.json({ data: answer() });
  });
  const json = express.json({ type: () => true });
  app.use(
    API_BASE,
    chain([
      (req, res, next) => (['POST', 'PUT', 'PATCH'].includes(req.method) ? json(req, res, next) : next()),
      onlyAt('POST', '/charges', pass),
      (_req, res, next) => {
        res.locals.tenant = { organizationId: 'bench', environment: 'production', tokenHash: 'bench' };
        setRateLimitHeaders(res, 1_000_000, 999_000, 30_000);
        next();
      },
      onlyAt('POST', '/bulk/customer-sessions', pass),
      ...openApiValidator(),
      refuseUnstorableText,
      // A GET carries no Idempotency-Key: the step goes on without its database.
      idempotency(undefined as never, undefined as never),
      dispatch,
    ]),
  );
  return app;
}

const socket = new Socket();

/** One request through `app`, answered into the response's own buffer. */
function request(app: Express): ServerResponse {
  const req = new IncomingMessage(socket);
  req.method = 'GET';
  req.url = `${API_BASE}/customers/${ID}`;
  req.headers = { host: '127.0.0.1', authorization: 'Bearer bench', connection: 'keep-alive' };
  req.push(null);
  const res = new ServerResponse(req);
  (app as unknown as (req: IncomingMessage, res: ServerResponse) => void)(req, res);
  return res;
}

const turn = () => new Promise((done) => setImmediate(done));

/** CPU µs per request over `count` requests, letting each few hundred finish (the service's handler is async). */
async function cpuPerRequest(app: Express, count: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let i = 1; i <= count; i++) {
    request(app);
    if (i % 500 === 0) await turn();
  }
  await turn();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / count;
}

async function main(): Promise<void> {
  const variants: [string, Express][] = [
    ['bare Express', bare()],
    ['+ validator', validated()],
    ['service chain', service()],
  ];
  // The validator loads its document asynchronously: one request each, then the answers are checked.
  for (const [, app] of variants) request(app);
  await new Promise((done) => setTimeout(done, 2000));
  for (const [label, app] of variants) {
    const res = request(app);
    await turn();
    if (res.statusCode !== 200) throw new Error(`${label} answered ${res.statusCode}`);
  }
  const count = Number(options.requests);
  const results = variants.map(() => [] as number[]);
  for (let round = 0; round < Number(options.rounds); round++) {
    const order = variants.map((_, i) => i);
    for (const i of round % 2 === 0 ? order : order.reverse()) results[i]!.push(await cpuPerRequest(variants[i]![1], count));
  }
  const minus = (a: number[], b: number[]) => median(a.map((value, round) => value - b[round]!));
  console.log(`GET /customers/{id} in the process, no network, no database: ${options.rounds} rounds of ${count} requests; CPU µs per request (medians; a difference: the median of each round's own)`);
  console.log('variant              CPU µs/req   over bare   over the one above');
  variants.forEach(([label], i) => {
    const over = i === 0 ? '' : minus(results[i]!, results[0]!).toFixed(1);
    const above = i === 0 ? '' : minus(results[i]!, results[i - 1]!).toFixed(1);
    console.log(`${label.padEnd(18)} ${median(results[i]!).toFixed(1).padStart(12)} ${over.padStart(11)} ${above.padStart(20)}`);
  });
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
