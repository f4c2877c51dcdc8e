/**
 * The service, as a table of contents: common middleware, health, auth, rate limit,
 * validation of requests and responses, resource routers, one error handler.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import express, { type Express } from 'express';
import type { AppDeps } from './deps';
import { authenticateAndLimit } from './http/access';
import { ApiError } from './kernel/errors';
import { errorHandler } from './http/error-handler';
import { refuseUnstorablePath, refuseUnstorableText } from './http/text';
import { openApiValidator } from './http/validator';
import { idempotency } from './idempotency/idempotency';
import { addressRoutes, customerRoutes } from './customers/customer-routes';
import { locationRoutes } from './locations/location-routes';
import { paymentMethodRoutes } from './payment-methods/payment-method-routes';
import { debtAccountRoutes } from './debt-accounts/debt-account-routes';
import { bulkRoutes } from './bulk/bulk-routes';
import { bulkCustomerSessionThrottle, customerSessionRoutes } from './customer-sessions/customer-session-routes';
import { shortLinkRoutes } from './portal/short-link-routes';
import { portalRouter, portalScope } from './portal/portal-router';
import { portalAccountRoutes } from './portal-logins/portal-account-routes';
import { webhookRoutes } from './webhooks/webhook-routes';
import { eventLogRoutes } from './event-log/event-log-routes';
import { chargeRoutes } from './payments/charge-routes';
import { paymentPlanRoutes } from './payment-plans/plan-routes';
import { listenToPayments } from './payment-plans/plan-listeners';
import { listenToCheckouts } from './portal/checkout-charges';
import { listenToAutopayCharges } from './autopay/autopay-outcome';
import { settlementOfferRoutes } from './settlement-offers/offer-routes';
import { listenForSettlements } from './settlement-offers/offer-listeners';
import { sandboxRoutes } from './sandbox/sandbox-routes';
import { settingsRoutes } from './settings/settings-routes';
import { paymentProcessorRoutes } from './payment-processors/processor-routes';
import { processorNoticeRoute } from './processor-notices/notice-routes';
import { communicationRoutes } from './communications/communication-routes';
import { externalChargeRoutes } from './external-charges/external-charge-routes';
import { autopayRoutes } from './autopay/autopay-routes';
import { documentRoutes } from './documents/document-routes';
import { ticketRoutes } from './tickets/ticket-routes';
import { disputeRoutes } from './disputes/dispute-routes';
import { validationNoticeRoutes } from './validation-notices/validation-notice-routes';
import { operationRoutes } from './http/typed-routes';
import { chain, onlyAt } from './http/chain';
import { requestLog, requestLogger } from './http/request-log';
import { refuseInvalidHost } from './http/host';
import { Readiness } from './operate/readiness';
import { nameTraceRoute } from './observability/trace-route';
import { answerLivez, answerMetrics, answerReadyz, methodAllowed, METRICS_PATH } from './operate/probe-routes';
import { countStatementError, enableMetrics } from './observability/metrics';

export const API_BASE = '/api/v1';
const BODY_LIMIT = '10mb';
/** Its own quota, counted after authentication and before validation (as a route of its own was). */
const BULK_SESSIONS = '/bulk/customer-sessions';

/** Only operations with a body read one: a body sent with a GET or DELETE (corrupt or not) is ignored. */
const readsJsonBody = (req: { method?: string; headers: Record<string, unknown> }) =>
  ['POST', 'PUT', 'PATCH'].includes(req.method ?? '') && /^\s*application\/json\s*(?:;|$)/i.test(String(req.headers['content-type'] ?? ''));

export interface AppOptions {
  /** What /readyz reports (server/main.ts's start says each step); by default ready once made. */
  readiness?: Readiness;
}

export function createApp(deps: AppDeps, { readiness = Readiness.serving(deps.db) }: AppOptions = {}): Express {
  const { config, db, logger } = deps;
  if (config.metricsEnabled) {
    enableMetrics();
    db.on('query-error', (error: { code?: string }) => countStatementError(error?.code));
  }
  listenToPayments();
  listenForSettlements();
  listenToCheckouts();
  listenToAutopayCharges(deps);
  const links = shortLinkRoutes(deps);
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag, so no 304 to an If-None-Match: no operation lists a 304 nor an ETag, and hashing
  // every body cost CPU on every answer for a conditional GET nobody was promised.
  app.set('etag', false);

  // The operating endpoints (openapi/operate.yaml): not logged per request, not counted, not traced.
  app.use((req, res, next) => {
    const path = req.path;
    if (path !== '/livez' && path !== '/readyz' && (path !== METRICS_PATH || !config.metricsEnabled)) return next();
    if (!methodAllowed(req, res)) return;
    if (path === '/livez') return answerLivez(res);
    if (path === '/readyz') return void answerReadyz(res, readiness).catch(next);
    answerMetrics(req, res, db, config.metricsToken).catch(next);
  });

  // Only method and path: never headers (the token) nor bodies (card numbers).
  app.use(chain([requestLog(logger, links.logPath), refuseUnstorablePath]));

  app.get('/health', async (_req, res, next) => {
    try {
      await db.raw('select 1');
      res.json({ status: 'ok' });
    } catch (error) {
      next(new ApiError('internal_error', 'The database is not reachable.'));
    }
  });

  // Only a request that reads a JSON body meets the parser (asked once, here): a GET or DELETE
  // skips it altogether.
  const json = express.json({ limit: BODY_LIMIT, type: () => true });
  // Every resource's operations in one table, answered by the operation the validator matched.
  const { routes, dispatch } = operationRoutes(API_BASE);
  for (const resource of [
    customerRoutes,
    addressRoutes,
    paymentMethodRoutes,
    debtAccountRoutes,
    locationRoutes,
    bulkRoutes,
    customerSessionRoutes,
    webhookRoutes,
    eventLogRoutes,
    chargeRoutes,
    paymentPlanRoutes,
    settlementOfferRoutes,
    sandboxRoutes,
    settingsRoutes,
    paymentProcessorRoutes,
    communicationRoutes,
    externalChargeRoutes,
    autopayRoutes,
    portalAccountRoutes,
    documentRoutes,
    ticketRoutes,
    disputeRoutes,
    validationNoticeRoutes,
  ]) {
    resource(routes, deps);
  }
  // What processors send (their own signature, no bearer token): ahead of the API's chain.
  app.post(`${API_BASE}/processor-webhooks/:id`, refuseInvalidHost, ...processorNoticeRoute(deps));
  // The whole API is one layer of the app (http/chain.ts): no router of its own to walk. Walking
  // one cost 2.4 µs more per request than a bare Express route in a hot loop; this costs the same.
  app.use(
    API_BASE,
    chain([
      refuseInvalidHost,
      (req, res, next) => (readsJsonBody(req) ? json(req, res, next) : next()),
      // One round trip: the token and its count (http/access.ts).
      authenticateAndLimit(db, { points: config.rateLimitPerMinute, durationSeconds: 60, keyPrefix: 'api' }),
      onlyAt('POST', BULK_SESSIONS, bulkCustomerSessionThrottle(deps)),
      ...openApiValidator(undefined, { onUndocumentedStatus: (req, status) => requestLogger(req, logger).error({ status }, 'contract bug: an answer with a status the operation does not document') }),
      nameTraceRoute,
      refuseUnstorableText,
      idempotency(db, deps.secrets),
      dispatch,
    ]),
  );

  // What a person's browser opens: no bearer token, no API rate limit (the link or the
  // Portal's session cookie is the credential). The Portal first: a short-link base of `/`
  // would otherwise take its paths.
  app.use(portalScope(deps).path, portalRouter(deps));
  for (const { path, router } of links.mounts) app.use(path, router);

  app.use((_req, _res, next) => next(new ApiError('not_found', 'No such route.')));
  app.use(errorHandler(logger));
  return app;
}

/**
 * How long an idle kept-alive connection stays open: longer than the idle timeout of the load
 * balancers and clients in front of us (60 s for most), so that they close it first. Node's 5 s
 * let a client send its next request on a connection we were closing at that moment: it failed
 * with a reset (a load balancer answers 502), through no fault of the request.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Listens on `port` (0: any free port); rejects with a clear error when the port is taken. */
export function listen(app: RequestListener, port: number, host?: string): Promise<Server> {
  return new Promise((resolveServer, reject) => {
    const server = createServer(app).listen(port, host ?? '0.0.0.0');
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // The headers of a request on a kept-alive connection may take as long to start.
    server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
    server.once('listening', () => resolveServer(server));
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new Error(`Port ${port} is already in use; set PORT to another one.`) : error),
    );
  });
}
