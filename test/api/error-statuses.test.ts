/**
 * Every operation of the API, sent a request that earns each shared error status it lists (the
 * lint rule openapi/plugins/error-statuses.js makes every operation list them): the answer has
 * that status, in the error shape, and the response validator found it in the document (no
 * "contract bug" line logged). So the document and the server cannot drift apart again.
 */
import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler } from 'express';
import { ApiError } from '../../server/kernel/errors';
import { loadDocument, openApiValidator } from '../../server/http/validator';
import { errorShapeProblem, rawRequest, type RawAnswer, type RawRequest } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

type Json = Record<string, unknown>;

interface Operation {
  label: string;
  method: string;
  /** `/api/v1/customers/{id}` with every path parameter a UUID that names nothing. */
  path: string;
  hasPathId: boolean;
  secured: boolean;
  /** The content type of its body and the document's example, if it takes one. */
  body?: { type: string; example: unknown };
  responses: string[];
}

function apiOperations(): Operation[] {
  const document = loadDocument() as unknown as Json;
  const resolve = (value: unknown): Json => {
    const ref = (value as Json | undefined)?.$ref;
    if (typeof ref !== 'string') return (value ?? {}) as Json;
    return resolve(ref.slice(2).split('/').reduce<unknown>((node, key) => (node as Json)[key], document));
  };
  const operations: Operation[] = [];
  for (const [template, raw] of Object.entries(document.paths as Json)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
      const operation = (raw as Json)[method] as Json | undefined;
      if (!operation) continue;
      const content = (resolve(operation.requestBody).content ?? undefined) as Record<string, Json> | undefined;
      const type = content && Object.keys(content)[0];
      const media = type ? content[type]! : undefined;
      const examples = media?.examples as Record<string, Json> | undefined;
      const security = (operation.security ?? document.security) as unknown[] | undefined;
      operations.push({
        label: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        path: `/api/v1${template.replace(/\{[^}]+\}/g, () => randomUUID())}`,
        hasPathId: template.includes('{'),
        secured: !(Array.isArray(security) && security.length === 0),
        ...(type ? { body: { type, example: media!.example ?? (examples ? resolve(Object.values(examples)[0]).value : {}) } } : {}),
        responses: Object.keys(operation.responses as Json),
      });
    }
  }
  return operations;
}

const operations = apiOperations();
let app: TestApp;
/** A second service whose tokens may send one request a minute: the next is a 429. */
let limited: TestApp;

beforeAll(async () => {
  [app, limited] = await Promise.all([startTestApp(), startTestApp({ rateLimitPerMinute: 1 })]);
});
afterAll(async () => {
  await Promise.all([app?.stop(), limited?.stop()]);
});

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

/** A multipart body with one PDF in the part `file` (and `size` bytes of it, for a 413). */
function multipart(size = PDF.length): { body: Buffer; type: string } {
  const boundary = `----error-statuses-${randomUUID()}`;
  const file = size === PDF.length ? PDF : Buffer.concat([PDF, Buffer.alloc(size - PDF.length, 0x20)]);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="letter.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
  return { body: Buffer.concat([Buffer.from(head), file, Buffer.from(`\r\n--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

function send(target: TestApp, operation: Operation, change: Partial<RawRequest> & { auth?: boolean } = {}): Promise<RawAnswer> {
  const { auth = true, ...request } = change;
  const headers: Record<string, string> = { ...(auth ? { authorization: `Bearer ${target.organization.production_token}` } : {}) };
  let body = request.body;
  if (body === undefined && operation.body) {
    const valid = operation.body.type === 'application/json' ? { body: JSON.stringify(operation.body.example), type: 'application/json' } : multipart();
    body = valid.body;
    headers['content-type'] = valid.type;
  }
  return rawRequest(target.origin, { method: operation.method, path: request.path ?? operation.path, headers: { ...headers, ...request.headers }, body });
}

const takesJson = (operation: Operation) => !operation.body || operation.body.type === 'application/json';

/** The request that earns `status` from `operation`. */
function earning(status: string, operation: Operation): (target: TestApp) => Promise<RawAnswer> {
  switch (status) {
    case '400':
      // Checked first for every operation (server/http/host.ts).
      return (t) => send(t, operation, { headers: { host: '[::1' } });
    case '401':
      return (t) => send(t, operation, { auth: false });
    case '404':
      return (t) => send(t, operation);
    case '413':
      if (takesJson(operation)) return (t) => send(t, operation, { body: Buffer.alloc(11 * 1024 * 1024, 0x20), headers: { 'content-type': 'application/json' } });
      return (t) => {
        const big = multipart(10 * 1024 * 1024 + 1);
        return send(t, operation, { body: big.body, headers: { 'content-type': big.type } });
      };
    case '415':
      return (t) => send(t, operation, { body: 'plain words', headers: { 'content-type': 'text/plain' } });
    case '422':
      return (t) => send(t, operation, { path: `${operation.path}?no_such_parameter=1` });
    case '429':
      return async (t) => {
        await send(t, operation);
        return send(t, operation);
      };
    default:
      throw new Error(`no request earns ${status}`);
  }
}

/**
 * The shared statuses each operation must list (openapi/plugins/error-statuses.js's rule), each
 * earned here: 400, 401 unless public, 404 with a path id, 413 and 415 with a body, 422, 429.
 * (500 is listed too; no request of a client earns it.)
 */
const cases = operations.flatMap((operation) => {
  const statuses = ['400', '422', ...(operation.secured ? ['401', '429'] : []), ...(operation.hasPathId ? ['404'] : []), ...(operation.body ? ['413', '415'] : [])];
  return statuses.sort().map((status) => [operation.label, status, operation] as const);
});

describe('every operation answers the error statuses it lists', () => {
  test.each(cases.filter(([, status]) => status !== '429'))('%s earns %s', async (label, status, operation) => {
    const answer = await earning(status, operation)(app);
    // A 404 for a path id: with the document's example body, the body may be refused first
    // (it names records of other tests); either is a listed answer to a request for nothing.
    const expected = status === '404' && operation.body ? ['404', '422'] : [status];
    expect({ label, status: String(answer.status) }).toEqual({ label, status: expect.stringMatching(new RegExp(`^(${expected.join('|')})$`)) });
    expect(operation.responses).toContain(String(answer.status));
    expect(errorShapeProblem(answer)).toBeUndefined();
  });

  test.each(cases.filter(([, status]) => status === '429'))('%s earns %s once the token has sent its minute', async (_label, _status, operation) => {
    const answer = await earning('429', operation)(limited);
    expect(answer.status).toBe(429);
    expect(operation.responses).toContain('429');
    expect(errorShapeProblem(answer)).toBeUndefined();
  });

  test('no answer had a status its operation does not list', () => {
    expect([...app.logs, ...limited.logs].filter((line) => line.includes('contract bug'))).toEqual([]);
  });
});

describe('an undocumented error status', () => {
  test('is answered as it is, and logged as a contract bug, never turned into a 500', async () => {
    // GET /customers lists no 409; a route that answers one anyway keeps it.
    const reported: number[] = [];
    const bare = express();
    bare.use('/api/v1', ...openApiValidator(undefined, { onUndocumentedStatus: (_req, status) => reported.push(status) }));
    bare.get('/api/v1/customers', () => {
      throw new ApiError('conflict', 'Not listed here.');
    });
    const answerError: ErrorRequestHandler = (error: ApiError, _req, res, _next) => void res.status(error.status).json(error.body());
    bare.use(answerError);
    const server = bare.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    try {
      const { port } = server.address() as { port: number };
      const answer = await rawRequest(`http://127.0.0.1:${port}`, { method: 'GET', path: '/api/v1/customers' });
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({ error: 'Not listed here.', errorCode: 'conflict' });
      expect(reported).toEqual([409]);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});

describe('a 405', () => {
  test('names the methods the path accepts in Allow (RFC 9110 15.5.6)', async () => {
    const answer = await rawRequest(app.origin, { method: 'PATCH', path: '/api/v1/customers', headers: { authorization: `Bearer ${app.organization.production_token}` } });
    expect(answer.status).toBe(405);
    expect(String(answer.headers.allow).split(/,\s*/).sort()).toEqual(['GET', 'POST']);
    expect(errorShapeProblem(answer)).toBeUndefined();
  });
});
