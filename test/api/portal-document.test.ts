/**
 * The Portal document as the service's validators see it: each of its two bases gets only
 * its own operations, under the path it is mounted at, and the API's document holds none of
 * them (the tools that read it would send them to /api/v1).
 */
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
