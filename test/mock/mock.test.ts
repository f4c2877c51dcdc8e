import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../server/kernel/net';
import { createApiClient, type ApiClient } from '../../client';
import { startMock, type RunningMock } from '../../mock/serve';
import { SANDBOX_DECLINES } from '../../server/gateway/sandbox-gateway';
import { apiDocument, document, exampleOf, operations, portalDocument, resolve as resolveRef, responseSchemaPointer, type DocumentView, type Operation } from '../support/document';

type Json = Record<string, unknown>;

/** The example the API document (or the Portal's, given as `view`) gives for one operation's response. */
function documentedExample(path: string, method: string, status: string, view: DocumentView = apiDocument): unknown {
  const paths = view.document.paths as Record<string, Json>;
  const operation = view.resolve<Json>(paths[path])[method] as Json;
  const response = view.resolve<Json>((operation.responses as Json)[status]);
  return view.exampleOf((response.content as Record<string, Json>)['application/json']);
}

/** The API's mock, the Portal's and the operating interface's, each serving its own document as `npm run mock` does. */
let mock: RunningMock;
let portalMock: RunningMock;
let operateMock: RunningMock;
let api: ApiClient;
const CUSTOMER = '9b2f6c1e-8d4a-4f7e-9a53-2c1d0e6b7a41';
const CSRF_TOKEN = (portalDocument.resolve<Json>((portalDocument.document.components as Json & { headers: Json }).headers.CsrfToken).schema as Json).example as string;

beforeAll(async () => {
  [mock, portalMock, operateMock] = await Promise.all([
    // Generous: Prism and the validators start slowly on a loaded 2-core machine.
    freePort().then((port) => startMock(port, { document: 'api', timeoutMs: 200_000 })),
    freePort().then((port) => startMock(port, { document: 'portal', timeoutMs: 200_000 })),
    freePort().then((port) => startMock(port, { document: 'operate', timeoutMs: 200_000 })),
  ]);
  api = createApiClient({ baseUrl: mock.url, token: 'mock-token' });
}, 240_000);

afterAll(async () => {
  await Promise.all([mock?.stop(), portalMock?.stop(), operateMock?.stop()]);
});

/** The mock that serves an operation's document. */
const mockOf = (operation: Operation) => (operation.base === 'api' ? mock : portalMock);

describe('the Prism mock answers one operation of every tag with its documented example', () => {
  test('Debt accounts: GET /debt-accounts/{id}', async () => {
    const { data, response } = await api.GET('/debt-accounts/{id}', { params: { path: { id: 'ACC-1001' } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(documentedExample('/debt-accounts/{id}', 'get', '200'));
  });

  test('Locations: GET /locations/{id}', async () => {
    const { data, response } = await api.GET('/locations/{id}', { params: { path: { id: 'LOC-LAKESIDE-01' } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(documentedExample('/locations/{id}', 'get', '200'));
  });

  test('Customers: GET /customers/{id}', async () => {
    const { data, response } = await api.GET('/customers/{id}', { params: { path: { id: CUSTOMER } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(documentedExample('/customers/{id}', 'get', '200'));
  });

  test('Customer addresses: GET /customers/{id}/addresses', async () => {
    const { data, response } = await api.GET('/customers/{id}/addresses', { params: { path: { id: CUSTOMER } } });
    expect(response.status).toBe(200);
    expect(data).toEqual(documentedExample('/customers/{id}/addresses', 'get', '200'));
  });

  test('Payment methods: POST /customers/{id}/payment-methods', async () => {
    const { data, response } = await api.POST('/customers/{id}/payment-methods', {
      params: { path: { id: CUSTOMER } },
      body: {
        card: {
          card_holder: 'Dana Whitfield',
          card_number: '4242424242424242',
          card_expiration_month: 12,
          card_expiration_year: '29',
        },
      },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual(documentedExample('/customers/{id}/payment-methods', 'post', '201'));
  });

  test('Customer sessions: POST /customer-sessions', async () => {
    const { data, response } = await api.POST('/customer-sessions', {
      body: { customer_id: CUSTOMER, valid_until: 72, tags: [{ name: 'utm_campaign', value: 'winter-letters' }] },
    });
    expect(response.status).toBe(201);
    expect(data).toEqual(documentedExample('/customer-sessions', 'post', '201'));
  });

  test('Portal entry: GET /s/{token}/accounts, on the Portal mock, without a token', async () => {
    const response = await fetch(`${portalMock.url}/s/Vq7XkR2mN9pLw4ZtB8cHs3Jd6FyGa1UeQx5Tn0Wb2Ko/accounts`, { redirect: 'manual' });
    // A redirect either way: Prism takes the lowest documented status (302, the expired link's).
    expect([302, 303]).toContain(response.status);
    expect(response.headers.get('location')).toBeTruthy();
  });

  test('Short links: GET /{code} redirects, on the Portal mock, without a token', async () => {
    const response = await fetch(`${portalMock.url}/Xb7k2Qm9TzR4`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/^https:\/\/portal\.debt-collection\.example\/s\//);
  });

  test('Bulk actions: POST /bulk', async () => {
    const { data, response } = await api.POST('/bulk', {
      body: [{ customer: { name: 'Dana Whitfield', email: 'dana.whitfield@mail.debt-collection.example' } }],
    });
    expect(response.status).toBe(201);
    expect(data).toEqual(documentedExample('/bulk', 'post', '201'));
  });

  test('Webhooks: GET /webhooks', async () => {
    const { data, response } = await api.GET('/webhooks');
    expect(response.status).toBe(200);
    expect(data).toEqual(documentedExample('/webhooks', 'get', '200'));
  });
});

describe('the operating interface\'s mock answers the probes and the metrics at its root, without a token', () => {
  const operate = JSON.parse(readFileSync(join(__dirname, '..', '..', 'generated', 'operate.json'), 'utf8')) as Json;
  /** The example the operating document gives for one operation's 200. */
  const operateExample = (path: string, type: string) =>
    ((((((operate.paths as Json)[path] as Json).get as Json).responses as Json)['200'] as Json).content as Record<string, Json>)[type]!.example;

  test('GET /livez answers its documented 200', async () => {
    const response = await fetch(`${operateMock.url}/livez`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(operateExample('/livez', 'application/json'));
  });

  test('GET /metrics answers Prometheus text, the documented example', async () => {
    const response = await fetch(`${operateMock.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toBe(operateExample('/metrics', 'text/plain'));
  });

  test('a method no probe has is 405, a path none has is 404, in the spec\'s shape', async () => {
    const post = await fetch(`${operateMock.url}/readyz`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await post.json()).toMatchObject({ errorCode: expect.any(String) });
    const nothing = await fetch(`${operateMock.url}/statusz`);
    expect(nothing.status).toBe(404);
    expect(await nothing.json()).toMatchObject({ errorCode: 'not_found' });
  });
});

describe('the Prism mock validates requests against the document', () => {
  test('without a token, answers 401', async () => {
    const response = await fetch(`${mock.url}/customers/${CUSTOMER}`);
    expect(response.status).toBe(401);
  });

  test('with a webhook secret of 15 characters, answers 422', async () => {
    const { response } = await api.POST('/webhooks', {
      body: { url: 'https://hooks.acme-recovery.example/dcs', events: ['customer.create'], secret: '0123456789abcde' },
    });
    expect(response.status).toBe(422);
  });

  test('with a limit of 501, answers 422', async () => {
    const { response } = await api.GET('/customers', { params: { query: { limit: 501 } } });
    expect(response.status).toBe(422);
  });
});

describe("the mock checks requests as the service does, in the service's words", () => {
  const ACCOUNT = '44d4da32-e353-4394-860d-3fbe1b8216be';
  const portalPost = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${portalMock.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const csrfToken = async () => (await fetch(`${portalMock.url}/api/session`)).headers.get('x-csrf-token')!;

  test('a Portal payment of -5 cents without accepting the policy answers 422 naming amount and accept_policy', async () => {
    const response = await portalPost(`/api/accounts/${ACCOUNT}/payments`, { amount: -5, accept_policy: false, card: { card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_expiration_month: 8, card_expiration_year: 29 } });
    expect(response.status).toBe(422);
    const body = (await response.json()) as { error: string; errorCode: string; errors: Record<string, string[]> };
    expect(body).toMatchObject({ error: 'The given data was invalid.', errorCode: 'validation_failed' });
    expect(Object.keys(body.errors).sort()).toEqual(['accept_policy', 'amount']);
  });

  test('a charge id that is not a UUID answers 422 in the spec\'s shape, naming path.id', async () => {
    const response = await fetch(`${mock.url}/charges/not-a-uuid`, { headers: { authorization: 'Bearer mock-token' } });
    expect(response.status).toBe(422);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({ error: 'The given data was invalid.', errorCode: 'validation_failed' });
    expect(Object.keys(body.errors as Json)).toEqual(['path.id']);
  });

  test('a path no operation has answers 404 {error, errorCode}, on both mocks', async () => {
    for (const url of [`${mock.url}/charges/${ACCOUNT}/nothing`, `${portalMock.url}/api/nothing/here`]) {
      const response = await fetch(url, { headers: { authorization: 'Bearer mock-token' } });
      expect({ url, status: response.status, body: await response.json() }).toEqual({ url, status: 404, body: { error: 'No such route.', errorCode: 'not_found' } });
    }
  });

  test('without a token, the API answers 401 unauthenticated', async () => {
    const response = await fetch(`${mock.url}/customers/${CUSTOMER}`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'No valid access token was given.', errorCode: 'unauthenticated' });
  });

  test('a Portal POST without X-CSRF-Token, or with another, answers 403 csrf_token_invalid; with the token of GET /api/session it goes through', async () => {
    const body = { ssn_last4: '0427' };
    for (const headers of [{}, { 'x-csrf-token': 'not-this-sessions-token' }] as Record<string, string>[]) {
      const refused = await portalPost('/api/verification', body, headers);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as Json).errorCode).toBe('csrf_token_invalid');
    }
    const accepted = await portalPost('/api/verification', body, { 'x-csrf-token': await csrfToken() });
    expect(accepted.status).toBe(200);
  });

  test.each(Object.entries(SANDBOX_DECLINES))('card %s declines as in the sandbox, on POST /charges and on a Portal payment', async (number, decline) => {
    const card = { card_holder: 'Maria Gonzalez', card_number: number, card_expiration_month: 8, card_expiration_year: 29 };
    const charge = await fetch(`${mock.url}/charges`, {
      method: 'POST',
      headers: { authorization: 'Bearer mock-token', 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 5000, debt_account_id: 'ACC-2026-004417', card }),
    });
    const portal = await portalPost(`/api/accounts/${ACCOUNT}/payments`, { amount: 5000, card, accept_policy: true }, { 'x-csrf-token': await csrfToken() });
    for (const response of [charge, portal]) {
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: decline.message, errorCode: decline.code, charge_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    }
  });

  test('a valid charge with card 4242 4242 4242 4242 goes on to Prism: 201 with the documented charge', async () => {
    const response = await fetch(`${mock.url}/charges`, {
      method: 'POST',
      headers: { authorization: 'Bearer mock-token', 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 5000, debt_account_id: 'ACC-2026-004417', card: { card_holder: 'Maria Gonzalez', card_number: '4242424242424242', card_expiration_month: 8, card_expiration_year: 29 } }),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual(documentedExample('/charges', 'post', '201'));
  });
});

describe('each mock serves its own document only', () => {
  test('a method the API path does not have is not taken for a short link (no 302)', async () => {
    const response = await fetch(`${mock.url}/customer-sessions`, { headers: { authorization: 'Bearer mock-token' }, redirect: 'manual' });
    expect(response.status).toBe(405);
  });

  test('the API mock knows no Portal page, the Portal mock no API operation', async () => {
    const portalPage = await fetch(`${mock.url}/s/Vq7XkR2mN9pLw4ZtB8cHs3Jd6FyGa1UeQx5Tn0Wb2Ko/accounts`, { headers: { authorization: 'Bearer mock-token' } });
    expect(portalPage.status).toBe(404);
    const apiCall = await fetch(`${portalMock.url}/customers/${CUSTOMER}`, { headers: { authorization: 'Bearer mock-token' } });
    expect(apiCall.status).toBe(404);
  });
});

/** The request the document's own examples make for an operation: path parameters, required query parameters and body. */
function documentedRequest(operation: Operation, extraHeaders: Record<string, string> = {}): [string, RequestInit] {
  const value = (parameter: Json) => String(parameter.example ?? (parameter.schema as Json | undefined)?.example ?? '');
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
    encodeURIComponent(value(operation.parameters.find((p) => p.in === 'path' && p.name === name)!)),
  );
  const query = operation.parameters
    .filter((p) => p.in === 'query' && p.required)
    .map((p) => `${encodeURIComponent(p.name as string)}=${encodeURIComponent(value(p))}`)
    .join('&');
  const content = operation.requestBody?.content as Record<string, Json> | undefined;
  // A form the operation does not require (the opt-out link's one click) is left out, as a browser's button sends none.
  const multipart = content && !content['application/json'] && operation.requestBody?.required !== false ? content['multipart/form-data'] : undefined;
  let body: string | FormData | undefined = content && !multipart ? JSON.stringify(operation.view.exampleOf(content['application/json'])) : undefined;
  if (multipart) {
    // A form as an integrator's HTTP library sends it: the example's fields, and a file of the type the document names.
    const form = new FormData();
    const fileType = String(((multipart.encoding as Json | undefined)?.file as Json | undefined)?.contentType ?? 'application/pdf');
    // A file part only where the form has one (an upload; not the opt-out link's one-click form).
    const properties = (operation.view.resolve<Json>(multipart.schema).properties ?? {}) as Json;
    const example = { ...('file' in properties ? { file: '' } : {}), ...((operation.view.exampleOf(multipart) ?? {}) as Json) };
    for (const [name, value] of Object.entries(example)) {
      if (name === 'file') form.append('file', new Blob([Buffer.from('%PDF-1.7\n%%EOF\n', 'latin1')], { type: fileType }), 'example.pdf');
      else for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item));
    }
    body = form;
  }
  // The Portal mock's POSTs carry the CSRF token its GET /api/session answers, as a browser's do.
  const csrf: Record<string, string> = operation.base === 'api' ? {} : { 'x-csrf-token': CSRF_TOKEN };
  const headers: Record<string, string> = { authorization: 'Bearer mock-token', ...csrf, ...extraHeaders };
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  return [`${mockOf(operation).url}${path}${query ? `?${query}` : ''}`, { method: operation.method.toUpperCase(), headers, body, redirect: 'manual' }];
}

/** The success status Prism answers: the first 2XX or 3XX the operation lists. */
const successOf = (operation: Operation) => Number(Object.keys(operation.responses).find((status) => /^[23]\d\d$/.test(status)));
const everyOperation = operations().map((operation) => [`${operation.method.toUpperCase()} ${operation.path}`, operation] as const);

async function answerOf(operation: Operation, headers: Record<string, string> = {}) {
  const response = await fetch(...documentedRequest(operation, headers));
  const text = await response.text();
  // A Portal page (the opt-out link's) answers HTML, kept as text for its string schema.
  const json = /json/.test(response.headers.get('content-type') ?? 'application/json');
  return { status: response.status, body: text ? (json ? (JSON.parse(text) as unknown) : text) : undefined };
}

describe('every operation of the mock answers what the document says', () => {
  test.each(everyOperation)('%s', async (_name, operation) => {
    const status = successOf(operation);
    const { status: answered, body } = await answerOf(operation);
    expect(answered).toBe(status);
    const pointer = responseSchemaPointer(operation, status);
    if (pointer) expect(operation.view.strictSchemaErrors(pointer, body)).toEqual([]);
  });
});

/** Every `[key, value]` of a JSON value, at any depth. */
function* entries(value: unknown, key = ''): Generator<[string, unknown]> {
  yield [key, value];
  if (Array.isArray(value)) for (const item of value) yield* entries(item, key);
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield* entries(v, k);
}

const DATE = /^(\d{4})-\d{2}-\d{2}(T|$)/;

describe('in dynamic mode (Prefer: dynamic=true) the mock invents nothing the document does not allow', () => {
  test.each(everyOperation)('%s', async (_name, operation) => {
    const status = successOf(operation);
    const { status: answered, body } = await answerOf(operation, { prefer: 'dynamic=true' });
    expect(answered).toBe(status);
    const pointer = responseSchemaPointer(operation, status);
    if (!pointer) return;
    // No property the document does not name, and every value within its schema.
    expect(operation.view.strictSchemaErrors(pointer, body)).toEqual([]);
    for (const [key, value] of entries(body)) {
      // Plausible dates: records of recent years, people born in the last century or so.
      const year = typeof value === 'string' ? DATE.exec(value)?.[1] : undefined;
      if (year) expect({ key, year: Number(year) >= (key === 'date_of_birth' ? 1900 : 2000) && Number(year) <= 2100 }).toEqual({ key, year: true });
      // Money a person reads: never negative, a refund never more than its charge, no option twice.
      if (['balance', 'current_balance', 'min_payment_amount', 'refunded_amount'].includes(key) && typeof value === 'number') expect({ key, value }).toEqual({ key, value: Math.abs(value) });
      if (value && typeof value === 'object' && typeof (value as Json).refunded_amount === 'number' && typeof (value as Json).amount === 'number') {
        expect((value as Json).refunded_amount as number).toBeLessThanOrEqual((value as Json).amount as number);
      }
      if (key === 'billing_options' && Array.isArray(value)) expect(new Set(value).size).toBe(value.length);
      // A customer's addresses: exactly one primary whenever there is any.
      if (key === 'addresses' && Array.isArray(value) && value.length > 0) {
        expect((value as { is_primary: boolean }[]).filter((address) => address.is_primary)).toHaveLength(1);
      }
    }
  });
});

describe('the examples tell one story', () => {
  /** Every object with a UUID `id` in `value`, with where it was found. */
  function* records(value: unknown, where: string): Generator<[string, Json, string]> {
    for (const [, node] of entries(value)) {
      if (node && typeof node === 'object' && !Array.isArray(node)) {
        const id = (node as Json).id;
        if (typeof id === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(id)) yield [id, node as Json, where];
      }
    }
  }
  const answersOf = (operations: Operation[]) =>
    operations.flatMap((operation) =>
      Object.entries(operation.responses).flatMap(([status, raw]) => {
        const media = (operation.view.resolve(raw).content as Record<string, Json> | undefined)?.['application/json'];
        if (!media) return [];
        const named = 'example' in media ? { example: media.example } : Object.fromEntries(Object.entries((media.examples as Json) ?? {}).map(([n, e]) => [n, operation.view.resolve<Json>(e).value]));
        return Object.entries(named).map(([name, value]) => [value, `${operation.method.toUpperCase()} ${operation.path} ${status} ${name}`] as const);
      }),
    );

  test('every record read in a list or a get answer is the same record, field for field, in every other read', () => {
    const reads = operations().filter((operation) => operation.method === 'get');
    const seen = new Map<string, [Json, string]>();
    const disagreements: string[] = [];
    for (const [value, where] of answersOf(reads)) {
      for (const [id, record, at] of records(value, where)) {
        const earlier = seen.get(id);
        if (!earlier) {
          seen.set(id, [record, at]);
          continue;
        }
        for (const key of Object.keys(record).filter((k) => k in earlier[0])) {
          if (JSON.stringify(record[key]) !== JSON.stringify(earlier[0][key])) disagreements.push(`${id}.${key}: ${at} vs ${earlier[1]}`);
        }
      }
    }
    expect(disagreements).toEqual([]);
  });

  test('one record has one external_id in every example, webhooks included', () => {
    const webhooks = Object.entries(document.webhooks as Json).map(([name, item]) => [exampleOf(((resolveRef(item).post as Json).requestBody as Json & { content: Record<string, Json> }).content['application/json']), `webhook ${name}`] as const);
    const externalIds = new Map<string, Set<unknown>>();
    for (const [value, where] of [...answersOf(operations()), ...webhooks]) {
      for (const [id, record] of records(value, where)) {
        if ('external_id' in record) (externalIds.get(id) ?? externalIds.set(id, new Set()).get(id)!).add(record.external_id);
      }
    }
    const several = [...externalIds].filter(([, ids]) => ids.size > 1).map(([id, ids]) => `${id}: ${[...ids].join(', ')}`);
    expect(several).toEqual([]);
  });

  test("each operation's 422 example names that operation's own fields", () => {
    const strangers: string[] = [];
    for (const operation of operations()) {
      const raw = operation.responses['422'];
      if (!raw) continue;
      const example = operation.view.exampleOf((operation.view.resolve(raw).content as Record<string, Json>)['application/json']) as { errors: Record<string, string[]> };
      const media = operation.requestBody?.content as Record<string, Json> | undefined;
      const body = (media?.['application/json'] ?? media?.['multipart/form-data'])?.schema;
      const bodyFields = new Set(body ? propertiesOf(body, operation.view) : []);
      for (const key of Object.keys(example.errors)) {
        const [where, name] = key.split('.') as [string, string];
        const known =
          where === 'query'
            ? name === 'unknown_parameter' || operation.parameters.some((p) => p.in === 'query' && p.name === name)
            : where === 'path'
              ? operation.parameters.some((p) => p.in === 'path' && p.name === name)
              : bodyFields.has(key.replace(/^\[\d+\]\.?/, '').split('.')[0]!) || key === 'body';
        if (!known) strangers.push(`${operation.operationId}: ${key}`);
      }
    }
    expect(strangers).toEqual([]);
  });
});

/** The property names of a schema, through $ref, allOf and array items. */
function propertiesOf(schema: unknown, view: DocumentView): string[] {
  const node = view.resolve(schema);
  if (node.type === 'array') return propertiesOf(node.items, view);
  return [...Object.keys((node.properties as Json | undefined) ?? {}), ...((node.allOf as unknown[] | undefined) ?? []).flatMap((part) => propertiesOf(part, view))];
}
