/**
 * The Portal document as the service's validators see it: each of its two bases gets only
 * its own operations, under the path it is mounted at, and the API's document holds none of
 * them (the tools that read it would send them to /api/v1).
 */
import { dirname } from 'node:path';
import { OpenAPISchemaValidator } from 'express-openapi-validator/dist/framework/openapi.schema.validator';
import { loadDocument, loadPortalDocument, portalDocumentAt } from '../../server/http/validator';

const portal = loadPortalDocument();

const operationsOf = (document: ReturnType<typeof loadPortalDocument>) =>
  Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.keys(item as object)
      .filter((key) => ['get', 'post', 'put', 'patch', 'delete'].includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );

test('the Portal base holds the Portal entry pages and the Portal API, served at PORTAL_URL’s path', () => {
  const document = portalDocumentAt(portal, 'portal', '/portal');
  expect(document.servers).toEqual([{ url: '/portal' }]);
  expect(operationsOf(document)).toEqual([
    'GET /s/{token}/accounts',
    'GET /s/{token}/accounts/{accountId}',
    'GET /s/{token}/accounts/{accountId}/checkout',
    'GET /s/{token}/accounts/{accountId}/documents',
    'GET /s/{token}/disputes/{disputeId}',
    'GET /opt-out/{link}',
    'POST /opt-out/{link}',
    'POST /opt-out/{link}/opt-in',
    'GET /api/session',
    'GET /api/accounts',
    'GET /api/accounts/{accountId}',
    'POST /api/accounts/{accountId}/payments',
    'POST /api/accounts/{accountId}/payment-plan',
    'POST /api/verification',
  ]);
});

test('the short-link base holds the short link alone, its own server replaced by the mount path', () => {
  const document = portalDocumentAt(portal, 'shortLinks', '/s');
  expect(document.servers).toEqual([{ url: '/s' }]);
  expect(operationsOf(document)).toEqual(['GET /{code}']);
  expect(JSON.stringify(document.paths)).not.toContain('"servers"');
});

test('a base mounted at the root of the host is served from /', () => {
  expect(portalDocumentAt(portal, 'shortLinks', '').servers).toEqual([{ url: '/' }]);
});

test('the API document has none of the Portal document’s paths or tags', () => {
  const api = loadDocument();
  expect(Object.keys(api.paths ?? {}).filter((path) => path in (portal.paths ?? {}))).toEqual([]);
  expect((api.tags ?? []).map((tag) => tag.name)).not.toEqual(expect.arrayContaining(['Portal entry']));
  expect((api.tags ?? []).map((tag) => tag.name)).not.toEqual(expect.arrayContaining(['Short links']));
});

/** The JSON Schema $ref bundler express-openapi-validator itself uses (its own dependency). */
const bundler = require(require.resolve('@apidevtools/json-schema-ref-parser', { paths: [dirname(require.resolve('express-openapi-validator'))] })) as {
  bundle(document: object): Promise<object>;
};

const refsOf = (document: object) => {
  const refs = new Set<string>();
  JSON.stringify(document, (key, value: unknown) => (key === '$ref' && typeof value === 'string' && refs.add(value), value));
  return [...refs];
};

// The validators take each document as given (validateApiSpec false, $refParser mode 'none'):
// it must be a valid OpenAPI document, by the library's own check, and bundling it again, as
// the library would, must change nothing.
const DOCUMENTS = [
  ['the API document', () => loadDocument()],
  ['the Portal base', () => portalDocumentAt(loadPortalDocument(), 'portal', '/portal')],
  ['the short-link base', () => portalDocumentAt(loadPortalDocument(), 'shortLinks', '/s')],
] as const;

const schemaErrors = (document: ReturnType<typeof loadDocument>) =>
  new OpenAPISchemaValidator({ version: document.openapi, validateApiSpec: true }).validate(document).errors;

test.each(DOCUMENTS)('%s is a valid OpenAPI document by express-openapi-validator’s own check', (_name, load) => {
  expect(schemaErrors(load())).toEqual([]);
});

test('that check finds a broken document', () => {
  const document = loadDocument();
  (document as unknown as { paths: unknown }).paths = [];
  expect(schemaErrors(document)?.length).toBeGreaterThan(0);
});

test.each(DOCUMENTS)('%s is bundled already: every $ref inside it, and bundling it again changes nothing', async (_name, load) => {
  const document = load();
  const refs = refsOf(document);
  expect(refs.length).toBeGreaterThan(0);
  expect(refs.filter((ref) => !ref.startsWith('#/'))).toEqual([]);
  expect(await bundler.bundle(structuredClone(document))).toEqual(document);
});
