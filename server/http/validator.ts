/**
 * express-openapi-validator over the bundled document: every request is checked before a
 * route sees it (all errors at once), and every response before it leaves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

type Document = OpenAPIV3.DocumentV3_1;

export const documentPath = join(__dirname, '..', '..', 'generated', 'openapi.json');

/** The tags of the operations that are served outside /api/v1, each under its own server. */
export const PORTAL_ENTRY_TAG = 'Portal entry';
export const SHORT_LINKS_TAG = 'Short links';
const OWN_SERVER_TAGS = [PORTAL_ENTRY_TAG, SHORT_LINKS_TAG];

export function loadDocument(): Document {
  return JSON.parse(readFileSync(documentPath, 'utf8')) as Document;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function tagsOf(pathItem: Record<string, unknown>): string[] {
  return METHODS.flatMap((method) => ((pathItem[method] as { tags?: string[] } | undefined)?.tags ?? []));
}

/**
 * The document as the validator of one base path must see it. express-openapi-validator reads
 * only the root `servers`, so it would take the Portal entry and short-link operations (which
 * name their own server) for /api/v1 ones, and `/{code}` would shadow every API path. So the
 * API's validator gets the document without them, and each of those bases gets only the
 * operations of its tag, under the path it is mounted at.
 */
export function documentFor(document: Document, only?: { tag: string; basePath: string }): Document {
  const copy = structuredClone(document);
  const paths: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(copy.paths ?? {})) {
    const tags = tagsOf(item as Record<string, unknown>);
    const keep = only ? tags.includes(only.tag) : !tags.some((tag) => OWN_SERVER_TAGS.includes(tag));
    if (!keep) continue;
    for (const method of METHODS) delete (item as Record<string, { servers?: unknown }>)[method]?.servers;
    paths[path] = item;
  }
  copy.paths = paths as Document['paths'];
  if (only) copy.servers = [{ url: only.basePath }];
  return copy;
}

/**
 * `forLinks`: the validator of the Portal entry or the short links, which people's browsers
 * open: any query parameter is let through (the tags, or what a mail or chat client appends),
 * and a request none of its operations describes falls through to the app's 404.
 */
export function openApiValidator(document: Document = documentFor(loadDocument()), { forLinks = false } = {}): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: document,
    validateRequests: { allErrors: true, removeAdditional: false, allowUnknownQueryParameters: forLinks },
    validateResponses: { allErrors: true, removeAdditional: false },
    // Authentication is ours (auth.ts): it runs first and answers 401 in the spec's shape.
    validateSecurity: false,
    // 'full' checks that a date exists (1984-02-30 is a 422, not a 500 from PostgreSQL).
    validateFormats: true,
    ajvFormats: { mode: 'full' },
    ignoreUndocumented: forLinks,
  }) as unknown as RequestHandler[];
}
