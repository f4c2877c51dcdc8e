/**
 * What stands in front of Prism: the service's own request checks, so that the mock refuses
 * what the service refuses, in the same words. The same express-openapi-validator set-up
 * (server/http/validator.ts) and the same error mapper (server/kernel/errors.ts) as the service,
 * a bearer token required on the API as the service requires one (any token will do here),
 * the Portal's CSRF check, and the sandbox's declining test cards; whatever passes goes on to
 * Prism for the documented example (or, with `Prefer: dynamic=true`, a generated answer).
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import pino from 'pino';
import { ApiError } from '../server/kernel/errors';
import { errorHandler } from '../server/http/error-handler';
import { BEARER } from '../server/http/access';
import { loadDocument, loadPortalDocument, openApiValidator, portalDocumentAt } from '../server/http/validator';
import { SANDBOX_DECLINES } from '../server/gateway/sandbox-gateway';
import { csrfMatches, csrfRefusal, csrfTokenOf } from '../server/portal/csrf';

type Document = ReturnType<typeof loadDocument>;
type Json = Record<string, unknown>;

/** The operations that charge a card at once, where the sandbox's declining cards decline. */
const CHARGING = new Set(['createCharge', 'createPortalPayment']);

/** The operating interface (openapi/operate.yaml, bundled): the probes and /metrics. */
const loadOperateDocument = (): Document => JSON.parse(readFileSync(join(__dirname, '..', 'generated', 'operate.json'), 'utf8')) as Document;

/** The mock serves every path at its root, as Prism does: the document with `/` as its one server. */
function atRoot(document: Document): Document {
  return { ...structuredClone(document), servers: [{ url: '/' }] };
}

/** Follows one local `#/components/...` reference of a bundled document. */
function resolved(document: Document, node: unknown): Json {
  const ref = (node as { $ref?: string } | undefined)?.$ref;
  if (!ref) return (node ?? {}) as Json;
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((at, part) => (at as Json)[part], document) as Json;
}

/** The documented `charge_id` of an operation's 400 (the stored failed charge of a decline). */
function declinedChargeId(document: Document, operation: Json): string | undefined {
  const response = resolved(document, (operation.responses as Json | undefined)?.['400']);
  const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
  const example = (media?.example ?? Object.values((media?.examples as Record<string, Json> | undefined) ?? {})[0]?.value) as Json | undefined;
  return typeof example?.charge_id === 'string' ? example.charge_id : undefined;
}

/** What the CSRF token of the Portal mock is: the one its `GET /api/session` answers in `X-CSRF-Token`. */
function documentedCsrfToken(document: Document): string {
  const header = resolved(document, document.components?.headers?.CsrfToken);
  const token = (header.schema as Json | undefined)?.example ?? header.example;
  if (typeof token !== 'string') throw new Error('The Portal document gives no example X-CSRF-Token');
  return token;
}

/** The card number of a request body, when it pays by a new card. */
const cardNumberOf = (body: unknown) => {
  const card = (body as { card?: { card_number?: unknown } } | undefined)?.card;
  return typeof card?.card_number === 'string' ? card.card_number : undefined;
};

/**
 * A declining test card answers what the sandbox answers: 400, its decline code and message,
 * and the id of the stored failed charge (the operation's documented one).
 */
function sandboxDeclines(document: Document): RequestHandler {
  // Read before the validator sees the document (it dereferences what it is given).
  const chargeIds = new Map<string, string | undefined>();
  for (const item of Object.values(document.paths ?? {}) as Json[]) {
    for (const operation of Object.values(item) as Json[]) {
      if (CHARGING.has(String(operation?.operationId))) chargeIds.set(String(operation.operationId), declinedChargeId(document, operation));
    }
  }
  return (req, res, next) => {
    const operationId = String((req as Request & { openapi?: { schema?: Json } }).openapi?.schema?.operationId);
    const decline = SANDBOX_DECLINES[cardNumberOf(req.body) ?? ''];
    if (!decline || !chargeIds.has(operationId)) return next();
    const error = new ApiError(decline.code, decline.message);
    res.status(error.status).json({ ...error.body(), charge_id: chargeIds.get(operationId) });
  };
}

/** The API's token check, without a database: a well-formed bearer token is enough. */
const anyBearerToken: RequestHandler = (req, _res, next) =>
  next(BEARER.test(req.get('authorization') ?? '') ? undefined : new ApiError('unauthenticated', 'No valid access token was given.'));

/** Every POST of the Portal API carries the token `GET /api/session` answered. */
function csrfCheck(token: string): RequestHandler {
  return (req, _res, next) => next(req.method === 'POST' && !csrfMatches(token, csrfTokenOf(req)) ? csrfRefusal() : undefined);
}

/** What no operation of the document matched: the service's 404, not Prism's. */
const unmatched: RequestHandler = (req, _res, next) => next((req as Request & { openapi?: unknown }).openapi ? undefined : new ApiError('not_found', 'No such route.'));

/** Sends the request on to Prism and its answer back, headers and all. */
function toPrism(target: URL): RequestHandler {
  return async (req: Request, res: Response, next) => {
    const headers: IncomingHttpHeaders = { ...req.headers, host: target.host };
    let body: Buffer | undefined;
    if (req.body !== undefined && ['POST', 'PUT', 'PATCH'].includes(req.method)) {
      const files = (req.files as Express.Multer.File[] | undefined) ?? [];
      if (files.length > 0) {
        // The upload step read the form; Prism is sent the same form again, its file included.
        const form = new FormData();
        for (const [name, value] of Object.entries(req.body as Record<string, unknown>)) {
          if (files.some((file) => file.fieldname === name)) continue;
          for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item));
        }
        for (const file of files) form.append(file.fieldname, new Blob([file.buffer], { type: file.mimetype }), file.originalname);
        const encoded = new globalThis.Request('http://mock.invalid/', { method: 'POST', body: form });
        body = Buffer.from(await encoded.arrayBuffer());
        headers['content-type'] = encoded.headers.get('content-type')!;
      } else body = Buffer.from(JSON.stringify(req.body));
      headers['content-length'] = String(body.length);
      delete headers['transfer-encoding'];
    }
    const forward = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.originalUrl, headers }, (answer) => {
      res.status(answer.statusCode ?? 502);
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && name !== 'transfer-encoding' && name !== 'connection') res.setHeader(name, value);
      answer.pipe(res);
    });
    forward.once('error', next);
    forward.end(body);
  };
}

/** Only a POST, PUT or PATCH that says it is JSON is read, as the service reads it. */
const json = express.json({ limit: '10mb', type: () => true });
const readBody: RequestHandler = (req, res, next) =>
  ['POST', 'PUT', 'PATCH'].includes(req.method) && /^\s*application\/json\s*(?:;|$)/i.test(req.get('content-type') ?? '') ? json(req, res, next) : next();

/** The front of one mock: `document` is which of the three it serves, `prism` where Prism listens. */
export function mockFront(document: 'api' | 'portal' | 'operate', prism: URL): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.set('etag', false);
  app.use(readBody);
  if (document === 'api') {
    const declines = sandboxDeclines(loadDocument());
    app.use(anyBearerToken, ...openApiValidator(atRoot(loadDocument()), { responses: false }), declines);
  } else if (document === 'operate') {
    // The probes and /metrics at the root, as the server serves them on its port; no token
    // asked for (the server asks /metrics for METRICS_TOKEN only when it is set).
    app.use(...openApiValidator(atRoot(loadOperateDocument()), { responses: false }), unmatched);
  } else {
    // Both bases of the Portal document at the root, as Prism serves them: the Portal's pages
    // and API first, then the short links, each validated as the service validates it.
    const portal = loadPortalDocument();
    const checks = [csrfCheck(documentedCsrfToken(portal)), sandboxDeclines(portal)];
    app.use(...openApiValidator(portalDocumentAt(portal, 'portal', ''), { forLinks: true, responses: false }));
    app.use(...openApiValidator(portalDocumentAt(portal, 'shortLinks', ''), { forLinks: true, responses: false }));
    app.use(unmatched, ...checks);
  }
  app.use(toPrism(prism));
  app.use(errorHandler(pino({ level: process.env.LOG_LEVEL ?? 'warn' })));
  return app;
}
