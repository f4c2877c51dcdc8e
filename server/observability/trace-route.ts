/**
 * Names a request's server span after the operation the document matched
 * (`POST /api/v1/charges`, attribute `http.route`), as the express instrumentation does for
 * Express's own routes: the API's operations are dispatched from one table, not by Express
 * routes, so it would only know `/api/v1`. Through the http instrumentation's request metadata
 * (the context key it and the express instrumentation share); with traces off there is none
 * and this does nothing.
 */
import { context, createContextKey, type Span } from '@opentelemetry/api';
import type { RequestHandler } from 'express';

const RPC_METADATA = createContextKey('OpenTelemetry SDK Context Key RPC_METADATA');

export const nameTraceRoute: RequestHandler = (req, _res, next) => {
  const metadata = context.active().getValue(RPC_METADATA) as { route?: string; span?: Span } | undefined;
  const route = (req as { openapi?: { openApiRoute?: string } }).openapi?.openApiRoute;
  if (metadata && route) {
    metadata.route = route;
    metadata.span?.setAttribute('http.route', route);
    metadata.span?.updateName(`${req.method} ${route}`);
  }
  next();
};
