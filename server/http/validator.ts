/**
 * express-openapi-validator over the bundled document: every request is checked before a
 * route sees it (all errors at once), and every response before it leaves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as OpenApiValidator from 'express-openapi-validator';
import type { RequestHandler } from 'express';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';

export const documentPath = join(__dirname, '..', '..', 'generated', 'openapi.json');

export function loadDocument(): OpenAPIV3.DocumentV3_1 {
  return JSON.parse(readFileSync(documentPath, 'utf8')) as OpenAPIV3.DocumentV3_1;
}

export function openApiValidator(document: OpenAPIV3.DocumentV3_1 = loadDocument()): RequestHandler[] {
  return OpenApiValidator.middleware({
    apiSpec: document,
    validateRequests: { allErrors: true, removeAdditional: false },
    validateResponses: { allErrors: true, removeAdditional: false },
    // Authentication is ours (auth.ts): it runs first and answers 401 in the spec's shape.
    validateSecurity: false,
    // 'full' checks that a date exists (1984-02-30 is a 422, not a 500 from PostgreSQL).
    validateFormats: true,
    ajvFormats: { mode: 'full' },
    ignoreUndocumented: false,
  }) as unknown as RequestHandler[];
}
