/**
 * The operations of both documents, as the hostile suite needs them: where, which parameters,
 * an example body. The API's (generated/openapi.json) under /api/v1, the Portal document's
 * (generated/portal.json) under the test app's Portal and short-link mounts.
 */
import { loadDocument, loadPortalDocument, portalBaseOf } from '../../../server/http/validator';

export interface Operation {
  label: string;
  method: string;
  /** The path template as the server mounts it (`/api/v1/customers/{id}`, `/portal/s/{token}/accounts`, `/s/{code}`). */
  template: string;
  query: string[];
  /** The document's example of the request body, if the operation takes one. */
  example?: unknown;
}

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Where the test app mounts each base (its PORTAL_URL and SHORT_LINK_BASE_URL paths). */
const MOUNTS = { api: '/api/v1', portal: '/portal', shortLinks: '/s' } as const;

export function operationsOf(): Operation[] {
  return [...operationsIn(loadDocument() as unknown as Json, false), ...operationsIn(loadPortalDocument() as unknown as Json, true)];
}

function operationsIn(document: Json, portal: boolean): Operation[] {
  const resolve = (value: unknown): Json => {
    const ref = (value as Json | undefined)?.$ref;
    if (typeof ref !== 'string') return (value ?? {}) as Json;
    return resolve(ref.slice(2).split('/').reduce<unknown>((node, key) => (node as Json)[key], document));
  };
  const operations: Operation[] = [];
  for (const [path, raw] of Object.entries(document.paths as Json)) {
    const item = raw as Json;
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const base = MOUNTS[portal ? portalBaseOf(item, operation) : 'api'];
      const parameters = [...((item.parameters as unknown[]) ?? []), ...((operation.parameters as unknown[]) ?? [])].map(resolve);
      const content = (resolve(operation.requestBody).content as Json | undefined)?.['application/json'] as Json | undefined;
      const examples = content?.examples as Record<string, Json> | undefined;
      const example = content ? (content.example ?? (examples ? Object.values(examples).map(resolve)[0]?.value : undefined)) : undefined;
      operations.push({
        label: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        template: `${base}${path}`,
        query: parameters.filter((parameter) => parameter.in === 'query').map((parameter) => String(parameter.name)),
        ...(content ? { example: example ?? {} } : {}),
      });
    }
  }
  return operations;
}
