import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const auth = () => ({ authorization: `Bearer ${app.organization.production_token}` });

describe('HTTP errors in the spec’s shape', () => {
  test('an unknown route answers 404', async () => {
    const response = await fetch(`${app.baseUrl}/no-such-thing`, { headers: auth() });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'not_found' });
  });

  test('a known path with another method answers 405', async () => {
    const response = await fetch(`${app.baseUrl}/customers`, { method: 'PATCH', headers: auth() });
    expect(response.status).toBe(405);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'method_not_allowed' });
  });

  test('a form-encoded body answers 415 and creates nothing', async () => {
    const response = await fetch(`${app.baseUrl}/customers`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Maria&email=maria%40mail.debt-collection.example',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'unsupported_media_type' });
    const { data } = await app.api.GET('/customers');
    expect(data!.meta.total).toBe(0);
  });

  test('a body over 10 MB answers 413', async () => {
    const response = await fetch(`${app.baseUrl}/customers`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(10 * 1024 * 1024), email: 'a@b.example' }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'payload_too_large' });
  });

  test('a conditional GET is answered in full: no ETag and no 304, which the document does not list', async () => {
    const { data } = await app.api.POST('/customers', { body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' } });
    const first = await fetch(`${app.baseUrl}/customers/${data!.data.id}`, { headers: auth() });
    expect(first.headers.get('etag')).toBeNull();
    const again = await fetch(`${app.baseUrl}/customers/${data!.data.id}`, { headers: { ...auth(), 'if-none-match': '*' } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
  });

  test('a request is answered by the operation it was validated against: a static path before a parameter, a trailing slash allowed', async () => {
    const { data } = await app.api.POST('/customers', { body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' } });
    const slash = await fetch(`${app.baseUrl}/customers/${data!.data.id}/`, { headers: auth() });
    expect(slash.status).toBe(200);
    expect(((await slash.json()) as { data: { id: string } }).data.id).toBe(data!.data.id);
    // `lookup` is not taken for a debt account's id: the lookup's own rule (a flow) answers.
    const lookup = await fetch(`${app.baseUrl}/debt-accounts/lookup/`, { headers: auth() });
    expect(lookup.status).toBe(422);
    expect(await lookup.json()).toMatchObject({ errorCode: 'validation_failed' });
  });

  test('every answer carries a request id', async () => {
    const response = await fetch(`${app.baseUrl}/customers`, { headers: auth() });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('a stored record that breaks the document answers a bare 500, logged with the request id', async () => {
    const { data } = await app.api.POST('/customers', { body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' } });
    // Written behind the API's back: the document says email is an e-mail address.
    await app.db('customers').where({ id: data!.data.id }).update({ email: 'not an e-mail' });
    const response = await fetch(`${app.baseUrl}/customers/${data!.data.id}`, { headers: auth() });
    expect(response.status).toBe(500);
    const requestId = response.headers.get('x-request-id')!;
    expect(await response.json()).toEqual({ error: `Internal server error (request id ${requestId}).`, errorCode: 'internal_error' });
    const logged = app.logs.map((line) => JSON.parse(line) as { level: number; req?: { id: string }; msg: string });
    expect(logged.some((line) => line.level === 50 && line.req?.id === requestId)).toBe(true);
  });
});

describe('GET /health', () => {
  test('answers 200 without a token once the database is reachable', async () => {
    const response = await fetch(new URL('/health', app.baseUrl));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });
});
