/**
 * express-openapi-validator over the bundled documents: every request is checked before a
 * route sees it (all errors at once), and every response before it leaves. The API under
 * /api/v1 is checked against generated/openapi.json, what a browser opens (the Portal and the
 * short links) against generated/portal.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as OpenApiValidator from 'express-openapi-validator';
import { acceptUploads } from './uploads';
import type { Request, RequestHandler } from 'express';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

type Document = OpenAPIV3.DocumentV3_1;

const generated = join(__dirname, '..', '..', 'generated');
export const documentPath = join(generated, 'openapi.json');
export const portalDocumentPath = join(generated, 'portal.json');

/** The integrators' API. */
export function loadDocument(): Document {
  return JSON.parse(readFileSync(documentPath, 'utf8')) as Document;
}

/** The Portal document: what a customer's browser calls. */
export function loadPortalDocument(): Document {
  return JSON.parse(readFileSync(portalDocumentPath, 'utf8')) as Document;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The two bases of the Portal document: its root server (PORTAL_URL) and the server the short
 * links name for themselves (SHORT_LINK_BASE_URL).
 */
export type PortalBase = 'portal' | 'shortLinks';

/** The base an operation of the Portal document is served at: its own `servers` (or its path's) make it a short link. */
export function portalBaseOf(pathItem: object, operation: object): PortalBase {
  return 'servers' in operation || 'servers' in pathItem ? 'shortLinks' : 'portal';
}

/**
 * The Portal document as the validator of one of its bases must see it. express-openapi-validator
 * reads only the root `servers`, so it would take the short link (which names its own server)
 * for a Portal page, and `/{code}` would answer for every one-segment path under PORTAL_URL. So
 * each base gets only its own operations, with the path it is mounted at as the one server.
 */
export function portalDocumentAt(document: Document, base: PortalBase, mountPath: string): Document {
  const copy = structuredClone(document);
  const paths: Record<string, unknown> = {};
  for (const [path, raw] of Object.entries(copy.paths ?? {})) {
    const item = raw as Record<string, object | undefined> & { servers?: unknown };
    const operations = METHODS.filter((method) => item[method] && portalBaseOf(item, item[method]!) === base);
    if (operations.length === 0) continue;
    for (const method of METHODS) {
      if (!operations.includes(method)) delete item[method];
      else delete (item[method] as { servers?: unknown }).servers;
    }
    delete item.servers;
    paths[path] = item;
  }
  copy.paths = paths as Document['paths'];
  copy.servers = [{ url: mountPath || '/' }];
  return copy;
}

/**
 * `forLinks`: the validator of the Portal or the short links, which people's browsers open:
 * any query parameter is let through (the tags, or what a mail or chat client appends), and a
 * request none of its operations describes falls through to the app's 404.
 */
/**
 * An answer whose status the operation does not list is a bug of the document (or of the code),
 * not of the client: it is answered as it is (a 400 stays a 400) and reported to
 * `onUndocumentedStatus`, never turned into a 500. Any other answer that breaks the document
 * (a wrong shape) still fails as before.
 */
const UNDOCUMENTED_STATUS = /^no schema defined for status code/;

export interface ValidatorOptions {
  forLinks?: boolean;
  responses?: boolean;
  onUndocumentedStatus?: (req: Request, status: number) => void;
}

export function openApiValidator(document: Document = loadDocument(), { forLinks = false, responses = true, onUndocumentedStatus }: ValidatorOptions = {}): RequestHandler[] {
  const onResponseError = (error: Error, _body: unknown, req: Request): void => {
    const status = req.res?.statusCode ?? 500;
    if (!UNDOCUMENTED_STATUS.test(error.message) || status < 400) throw error;
    onUndocumentedStatus?.(req, status);
  };
  const middlewares = OpenApiValidator.middleware({
    apiSpec: document,
    validateRequests: { allErrors: true, removeAdditional: false, allowUnknownQueryParameters: forLinks },
    // `responses: false` for the mock, whose answers are Prism's, not this process's.
    validateResponses: responses ? { allErrors: true, removeAdditional: false, onError: onResponseError } : false,
    // Authentication is ours (../kernel/tenant.ts): it runs first and answers 401 in the spec's shape.
    validateSecurity: false,
    // 'full' checks that a date exists (1984-02-30 is a 422, not a 500 from PostgreSQL).
    validateFormats: true,
    ajvFormats: { mode: 'full' },
    ignoreUndocumented: forLinks,
    // Uploads are ours (uploads.ts): its limits and errors in the spec's shape, and only for
    // the operations that take multipart.
    fileUploader: false,
    // The documents are built and checked before they ship, not at every start: `npm run generate`
    // bundles them (every $ref inside them), and test/api/portal-document.test.ts checks each one
    // (the API's, and the Portal's two bases as derived below) against the OpenAPI schema with
    // this library's own check, and that bundling it again changes nothing. So each is used as
    // given: no check against the OpenAPI schema (compiling that schema alone took about 0.3 s
    // of CPU) and no second bundling (a walk of the whole document that returns it unchanged,
    // about 0.3 s for the API's), in every server process and every test file. Mode 'none', and
    // the schema compiled only when a check is asked for, are our patch's
    // (patches/express-openapi-validator+*.patch).
    validateApiSpec: false,
    $refParser: { mode: 'none' },
  }) as unknown as RequestHandler[];
  // After the operation is matched (the metadata step), before the request is validated.
  const at = middlewares.findIndex((middleware) => middleware.name === 'requestMiddleware');
  if (at < 0) throw new Error('express-openapi-validator no longer names its request step: place the upload step by hand');
  return [...middlewares.slice(0, at), acceptUploads, ...middlewares.slice(at)];
}
