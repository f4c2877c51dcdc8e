/**
 * Requests an attacker or a careless client sends: each answers a 4xx in the spec's error
 * shape (never a 500, never HTML) and changes nothing.
 */
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { errorHandler } from '../../server/http/error-handler';
import { createLogger } from '../../server/kernel/logging';
import { expectFieldError, newCustomer, newDebtAccount } from '../support/fixtures';
import { rawRequest, type RawAnswer } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Raw = RawAnswer & { body: { error?: string; errorCode?: string; errors?: Record<string, string[]> } };

/** One request exactly as written, with the organization's token unless the headers say otherwise. */
const raw = (method: string, path: string, { headers = {}, body }: { headers?: Record<string, string>; body?: Buffer | string } = {}) =>
  rawRequest(app.origin, { method, path, headers: { authorization: `Bearer ${app.organization.production_token}`, ...headers }, body }) as Promise<Raw>;

const json = (value: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof value === 'string' ? value : JSON.stringify(value),
});

function expectErrorShape(answer: Raw, status: number, errorCode?: string): void {
  expect({ status: answer.status, type: answer.type }).toEqual({ status, type: expect.stringContaining('application/json') });
  expect(answer.text).not.toMatch(/<html|at .*\.ts:\d+/i);
  expect(answer.body).toEqual(expect.objectContaining({ error: expect.any(String), errorCode: errorCode ?? expect.any(String) }));
}

const customerCount = async () => Number((await app.db('customers').count<{ count: string }[]>({ count: '*' }))[0]!.count);

describe('1. a NUL byte in any string', () => {
  test.each([
    ['GET', '/api/v1/customers/a%00b'],
    ['PUT', '/api/v1/customers/a%00b'],
    ['DELETE', '/api/v1/debt-accounts/a%00b'],
    ['GET', '/api/v1/locations/%00'],
    ['GET', '/api/v1/webhooks/a%00b'],
    ['GET', '/s/a%00b/accounts'],
    ['GET', '/s/a%00b'],
  ])('%s %s answers 404', async (method, path) => {
    const answer = await raw(method, path, method === 'PUT' ? json({ name: 'X' }) : {});
    expectErrorShape(answer, 404, 'not_found');
  });

  test('in a lookup name: 422 on that parameter', async () => {
    const answer = await raw('GET', '/api/v1/debt-accounts/lookup?lookup_flow_type=first_name_last_name_ssn_last4&first_name=Ma%00ria&last_name=Gonzalez&ssn_last4=0427');
    expectErrorShape(answer, 422, 'validation_failed');
    expect(Object.keys(answer.body.errors!)).toContain('query.first_name');
  });

  test('in a body string or in metadata: 422 on that field, and nothing is stored', async () => {
    const before = await customerCount();
    const name = await raw('POST', '/api/v1/customers', json({ name: 'Maria\u0000', email: 'maria@mail.debt-collection.example' }));
    expectErrorShape(name, 422, 'validation_failed');
    expectFieldError(name.body, 'name');
    const value = await raw('POST', '/api/v1/customers', json({ name: 'Maria', email: 'maria@mail.debt-collection.example', metadata: { k: 'a\u0000b' } }));
    expectFieldError(value.body, 'metadata.k');
    const key = await raw('POST', '/api/v1/customers', json({ name: 'Maria', email: 'maria@mail.debt-collection.example', metadata: { 'a\u0000': 'b' } }));
    expectFieldError(key.body, 'metadata');
    expect(await customerCount()).toBe(before);
  });
});

describe('2. an unknown field named like a property of every object', () => {
  test.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'])('%s answers 422 on that field', async (field) => {
    const answer = await raw('POST', '/api/v1/customers', json(`{"name":"Maria","email":"maria@mail.debt-collection.example","${field}":{"x":1}}`));
    expectErrorShape(answer, 422, 'validation_failed');
    expect(Object.keys(answer.body.errors!)).toEqual([field]);
  });
});

describe('2. prototype names as data', () => {
  test('metadata keys named __proto__, constructor and toString are stored and read back like any key', async () => {
    const created = await raw('POST', '/api/v1/customers', json('{"name":"Maria","email":"m@mail.debt-collection.example","metadata":{"__proto__":"a","constructor":"b","toString":"c"}}'));
    expect(created.status).toBe(201);
    const id = (created.body as unknown as { data: { id: string } }).data.id;
    const read = await raw('GET', `/api/v1/customers/${id}?include=metadata`);
    const metadata = (read.body as unknown as { data: { metadata: { attribute: string; value: string }[] } }).data.metadata;
    expect(metadata).toEqual(expect.arrayContaining([{ attribute: '__proto__', value: 'a' }, { attribute: 'constructor', value: 'b' }, { attribute: 'toString', value: 'c' }]));
    const updated = await raw('PUT', `/api/v1/customers/${id}`, json('{"metadata":{"__proto__":"z","hasOwnProperty":"d"}}'));
    expect(updated.status).toBe(200);
    const after = (await raw('GET', `/api/v1/customers/${id}?include=metadata`)).body as unknown as { data: { metadata: { attribute: string; value: string }[] } };
    expect(after.data.metadata).toEqual(expect.arrayContaining([{ attribute: '__proto__', value: 'z' }, { attribute: 'hasOwnProperty', value: 'd' }]));
  });
});

describe('3. a body whose Content-Encoding does not match its bytes', () => {
  test.each(['gzip', 'deflate', 'br'])('%s answers 400, and nothing is stored', async (encoding) => {
    const before = await customerCount();
    const answer = await raw('POST', '/api/v1/customers', {
      headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      body: Buffer.from('{"name":"Maria","email":"m@mail.debt-collection.example"} not compressed'),
    });
    expectErrorShape(answer, 400, 'bad_request');
    expect(await customerCount()).toBe(before);
  });

  test('a truncated gzip body answers 400; a good one is read', async () => {
    const body = gzipSync(JSON.stringify({ name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' }));
    const cut = await raw('POST', '/api/v1/customers', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: body.subarray(0, body.length - 6) });
    expectErrorShape(cut, 400, 'bad_request');
    const whole = await raw('POST', '/api/v1/customers', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
    expect(whole.status).toBe(201);
  });

  test('an unknown Content-Encoding answers 415', async () => {
    const answer = await raw('POST', '/api/v1/customers', { headers: { 'content-type': 'application/json', 'content-encoding': 'zstd-x' }, body: '{}' });
    expectErrorShape(answer, 415, 'unsupported_media_type');
  });
});

describe('4. a malformed Host header', () => {
  test.each(['/api/v1/customers', '/api/v1/debt-accounts', '/api/v1/locations'])('GET %s answers 400', async (path) => {
    for (const host of ['a b', 'a:b:c', '[::1', 'exa mple.com:80']) {
      const answer = await raw('GET', path, { headers: { host } });
      expectErrorShape(answer, 400, 'bad_request');
    }
  });

  test('a normal Host still makes the links', async () => {
    const answer = await raw('GET', '/api/v1/customers?limit=1', { headers: { host: 'api.debt-collection.example:8443' } });
    expect(answer.status).toBe(200);
    expect((answer.body as unknown as { links: { first: string } }).links.first).toBe('http://api.debt-collection.example:8443/api/v1/customers?limit=1&page=1');
  });
});

describe('5. non-finite page and limit', () => {
  test.each(['limit=Infinity', 'limit=1e309', 'page=1e309', 'page=Infinity', 'limit=-Infinity', 'page=NaN', 'limit=1e3', 'page=9007199254740993'])('%s answers 422', async (query) => {
    const answer = await raw('GET', `/api/v1/customers?${query}`);
    expectErrorShape(answer, 422, 'validation_failed');
    expect(Object.keys(answer.body.errors!)).toEqual([`query.${query.split('=')[0]}`]);
  });
});

describe('6. a lone surrogate in a stored string', () => {
  test('in metadata, a name, or a bulk row: 422 on that field, nothing stored', async () => {
    const before = await customerCount();
    const metadata = await raw('POST', '/api/v1/customers', json('{"name":"Maria","email":"m@mail.debt-collection.example","metadata":{"k":"a\\ud800b"}}'));
    expectErrorShape(metadata, 422, 'validation_failed');
    expectFieldError(metadata.body, 'metadata.k');
    const name = await raw('POST', '/api/v1/customers', json('{"name":"Maria \\udc00","email":"m@mail.debt-collection.example"}'));
    expectFieldError(name.body, 'name');
    const bulk = await raw('POST', '/api/v1/bulk', json('[{"customer":{"name":"A\\ud800","email":"a@mail.debt-collection.example"}}]'));
    expectErrorShape(bulk, 422, 'validation_failed');
    expect(Object.keys(bulk.body.errors!)).toContain('[0].customer.name');
    expect(await customerCount()).toBe(before);
    expect(Number((await app.db('bulk_actions').count<{ count: string }[]>({ count: '*' }))[0]!.count)).toBe(0);
  });

  test('a well-formed pair (an emoji) is stored and answered as given', async () => {
    const customer = await newCustomer(app.api, { name: 'Maria 😀', metadata: { mood: '😀' } });
    expect(customer.name).toBe('Maria 😀');
  });
});

describe('7. portal_url within the document’s 2048 characters', () => {
  test('tags that would make portal_url longer than 2048 answer 422 on tags, and no session is saved', async () => {
    const customer = await newCustomer(app.api);
    const value = '\u{10FFFF}'.repeat(127);
    const tags = (['utm_medium', 'utm_campaign', 'utm_content', 'utm_id'] as const).map((name) => ({ name, value }));
    const answer = await raw('POST', '/api/v1/customer-sessions', json({ customer_id: customer.id, tags }));
    expectErrorShape(answer, 422, 'validation_failed');
    expect(Object.keys(answer.body.errors!)).toEqual(['tags']);
    expect(Number((await app.db('customer_sessions').count<{ count: string }[]>({ count: '*' }))[0]!.count)).toBe(0);
  });

  test('the longest tags that fit are accepted and the link is exactly as long as allowed or less', async () => {
    const customer = await newCustomer(app.api);
    const tags = (['utm_medium', 'utm_campaign', 'utm_content', 'utm_id'] as const).map((name) => ({ name, value: 'x'.repeat(255) }));
    const { data, response } = await app.api.POST('/customer-sessions', { body: { customer_id: customer.id, tags } });
    expect(response.status).toBe(201);
    expect(data!.data.portal_url.length).toBeLessThanOrEqual(2048);
  });

  test('in bulk, the item whose tags are too long is named', async () => {
    const customer = await newCustomer(app.api);
    const tags = (['utm_medium', 'utm_campaign', 'utm_content', 'utm_id'] as const).map((name) => ({ name, value: '€'.repeat(255) }));
    const answer = await raw('POST', '/api/v1/bulk/customer-sessions', json([{ customer_id: customer.id }, { customer_id: customer.id, tags }]));
    expectErrorShape(answer, 422, 'validation_failed');
    expect(Object.keys(answer.body.errors!)).toEqual(['[1].tags']);
  });
});

describe('8. include with literal commas', () => {
  test('include=metadata,addresses works as %2C does', async () => {
    const customer = await newCustomer(app.api, { metadata: { k: 'v' } });
    const literal = await raw('GET', `/api/v1/customers/${customer.id}?include=metadata,addresses,payment_methods.chargeable`);
    const encoded = await raw('GET', `/api/v1/customers/${customer.id}?include=metadata%2Caddresses%2Cpayment_methods.chargeable`);
    expect(literal.status).toBe(200);
    expect(literal.body).toEqual(encoded.body);
    expect(Object.keys((literal.body as unknown as { data: object }).data)).toEqual(expect.arrayContaining(['metadata', 'addresses', 'payment_methods']));
  });

  test('on lists and debt accounts too', async () => {
    const customer = await newCustomer(app.api);
    const account = await newDebtAccount(app.api, customer.id);
    expect((await raw('GET', '/api/v1/customers?include=metadata,debt_accounts.location')).status).toBe(200);
    expect((await raw('GET', `/api/v1/debt-accounts/${account.id}?include=customer,location`)).status).toBe(200);
    expect((await raw('GET', '/api/v1/debt-accounts?include=customer,metadata')).status).toBe(200);
  });
});

describe('9. the Bearer scheme in any case', () => {
  test.each(['bearer', 'BEARER', 'BeArEr'])('%s <token> is accepted', async (scheme) => {
    const answer = await raw('GET', '/api/v1/customers', { headers: { authorization: `${scheme} ${app.organization.production_token}` } });
    expect(answer.status).toBe(200);
  });

  test('another scheme or no token is still a 401', async () => {
    for (const authorization of ['Basic abc', 'bearer', 'Bearerx abc', `Bearer  ${app.organization.production_token}x`]) {
      expectErrorShape(await raw('GET', '/api/v1/customers', { headers: { authorization } }), 401, 'unauthenticated');
    }
  });
});

describe('the error handler cannot fail', () => {
  test('a malformed percent-encoding in a path answers 4xx JSON', async () => {
    for (const path of ['/api/v1/customers/%E0%A4%A', '/api/v1/customers/%ED%A0%80', '/s/%ZZ/accounts', '/%E0%A4%A']) {
      const answer = await raw('GET', path);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expectErrorShape(answer, answer.status);
    }
  });

  test('JSON nested ten thousand deep answers 4xx JSON', async () => {
    const deep = `{"name":"Maria","email":"m@mail.debt-collection.example","metadata":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const answer = await raw('POST', '/api/v1/customers', json(deep));
    expect(answer.status).toBe(422);
    expectErrorShape(answer, 422);
  });

  test.each([
    ['a string', () => 'just a string'],
    ['a number', () => 42],
    ['an object whose every property throws', () => new Proxy({}, { get: () => { throw new Error('no'); } })],
    ['a validator error naming prototype keys', () => ({ status: 400, errors: [{ path: '/body/__proto__', message: 'x' }, { path: '/body/constructor' }, { path: 7 }] })],
    ['an http error of an odd status', () => Object.assign(new Error('teapot'), { status: 418, expose: true })],
    ['a status that is no number', () => ({ status: 'four hundred' })],
  ])('%s thrown answers JSON in the error shape', async (_what, make) => {
    const small = express();
    small.get('/boom', () => {
      throw make();
    });
    small.use(errorHandler(createLogger('silent')));
    const server = small.listen(0, '127.0.0.1');
    await new Promise((done) => server.once('listening', done));
    try {
      const answer = (await rawRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { method: 'GET', path: '/boom' })) as Raw;
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.type).toContain('application/json');
      expect(answer.body).toEqual(expect.objectContaining({ error: expect.any(String), errorCode: expect.any(String) }));
      expect(answer.text).not.toMatch(/<html|at .*\.ts:\d+/i);
    } finally {
      server.close();
    }
  });
});
