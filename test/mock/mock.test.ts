import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../server/net';
import { createApiClient, type ApiClient } from '../../client';
import { startMock, type RunningMock } from '../../mock/serve';

type Json = Record<string, unknown>;
const document = JSON.parse(readFileSync(join(__dirname, '../../generated/openapi.json'), 'utf8')) as Json;

/** Follows a local $ref such as #/components/responses/NotFound. */
function resolveRef(node: unknown): Json {
  let current = node as Json;
  while (typeof current.$ref === 'string') {
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce<Json>((at, key) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, document);
  }
  return current;
}

/** The example the document gives for one operation's response. */
function documentedExample(path: string, method: string, status: string): unknown {
  const paths = document.paths as Record<string, Json>;
  const operation = resolveRef(paths[path])[method] as Json;
  const response = resolveRef((operation.responses as Json)[status]);
  const media = (response.content as Record<string, Json>)['application/json'] as Json;
  if ('example' in media) return media.example;
  const first = Object.values(media.examples as Record<string, unknown>)[0];
  return resolveRef(first).value;
}

let mock: RunningMock;
let api: ApiClient;
const CUSTOMER = '9b2f6c1e-8d4a-4f7e-9a53-2c1d0e6b7a41';

beforeAll(async () => {
  mock = await startMock(await freePort());
  api = createApiClient({ baseUrl: mock.url, token: 'mock-token' });
}, 90_000);

afterAll(async () => {
  await mock?.stop();
});

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

  test('Portal entry: GET /s/{token}/accounts, on its own server, without a token', async () => {
    const response = await fetch(`${mock.url}/s/Vq7XkR2mN9pLw4ZtB8cHs3Jd6FyGa1UeQx5Tn0Wb2Ko/accounts`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(documentedExample('/s/{token}/accounts', 'get', '200'));
  });

  test('Short links: GET /{code} redirects, without a token', async () => {
    const response = await fetch(`${mock.url}/Xb7k2Qm9TzR4`, { redirect: 'manual' });
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
