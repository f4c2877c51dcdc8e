/**
 * Every answer is documented: each operation of both documents (the API's and the Portal's) is sent an unknown query
 * parameter, a body of another media type (where it takes a body) and a method its path does
 * not have, through the real server; each answer's status must be one the operation lists,
 * and its body the document's error shape.
 */
import { lists, METHODS, operations, type Operation } from '../support/document';
import { UNKNOWN_UUID } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const all = operations();
const withBody = all.filter((operation) => operation.requestBody);
const api = (operation: Operation) => operation.base === 'api';

/** The operation's URL on the test server, with each path parameter set to a well-formed value of nothing. */
function urlOf(operation: Operation, query = ''): string {
  const base = { api: app.baseUrl, portal: app.config.portalUrl, shortLinks: app.config.shortLinkBaseUrl }[operation.base];
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === name);
    const schema = (parameter?.schema ?? {}) as { format?: string };
    const value = schema.format === 'uuid' ? UNKNOWN_UUID : ((parameter?.example as string | undefined) ?? 'unknown');
    return encodeURIComponent(value);
  });
  return `${base}${path}${query}`;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${app.organization.production_token}`, ...extra };
}

/** The body the document gives as the operation's request example, as JSON text. */
function exampleBody(operation: Operation): string {
  const content = operation.requestBody!.content as Record<string, Record<string, unknown>>;
  return JSON.stringify(operation.view.exampleOf(content['application/json']) ?? {});
}

async function expectDocumented(operation: Operation, response: Response): Promise<void> {
  const status = response.status;
  const text = await response.text();
  expect({ operation: operation.operationId, status, listed: lists(operation, status) }).toEqual({ operation: operation.operationId, status, listed: true });
  if (status < 400) return;
  // The Portal's pages answer HTML where the document says so; everything else, the spec's error body.
  if (/^text\/html/.test(response.headers.get('content-type') ?? '')) {
    const documented = operation.view.resolve<{ content?: Record<string, unknown> }>(operation.responses[String(status)]);
    expect(Object.keys(documented.content ?? {})).toContain('text/html');
    expect(text).toMatch(/^<!doctype html>/);
  } else expect(operation.view.schemaErrors('#/components/schemas/Error', JSON.parse(text))).toEqual([]);
}

const name = (operation: Operation) => `${operation.method.toUpperCase()} ${operation.path}`;

describe('an unknown query parameter', () => {
  test.each(all.map((operation) => [name(operation), operation] as const))('%s: a documented answer', async (_name, operation) => {
    const content = operation.requestBody?.content as Record<string, unknown> | undefined;
    // An operation that takes only a form is sent its form (its example, and a file), as a client sends it.
    const form = content && !content['application/json'] && content['multipart/form-data'] ? new FormData() : undefined;
    if (form) {
      for (const [field, value] of Object.entries((operation.view.exampleOf(content!['multipart/form-data'] as never) ?? {}) as Record<string, unknown>)) {
        if (field !== 'file') form.append(field, String(Array.isArray(value) ? value[0] : value));
      }
      form.append('file', new Blob([Buffer.from('%PDF-1.7\n%%EOF\n', 'latin1')], { type: 'application/pdf' }), 'example.pdf');
    }
    const response = await fetch(urlOf(operation, '?unknown_parameter=1'), {
      method: operation.method.toUpperCase(),
      headers: headers(operation.requestBody && !form ? { 'content-type': 'application/json' } : {}),
      body: form ?? (operation.requestBody ? exampleBody(operation) : undefined),
      redirect: 'manual',
    });
    // The API refuses what it does not know; the browser-facing links let any query through (tags, trackers).
    if (api(operation)) expect(response.status).toBe(422);
    await expectDocumented(operation, response);
  });
});

describe('a body of another media type', () => {
  test.each(withBody.map((operation) => [name(operation), operation] as const))('%s: 415, documented', async (_name, operation) => {
    const response = await fetch(urlOf(operation), {
      method: operation.method.toUpperCase(),
      headers: headers({ 'content-type': 'text/plain' }),
      body: exampleBody(operation),
    });
    expect(response.status).toBe(415);
    await expectDocumented(operation, response);
  });
});

describe('a POST that takes no body, sent one anyway', () => {
  const bodiless = all.filter((operation) => api(operation) && operation.method === 'post' && !operation.requestBody);
  test('there are such operations (void, cancel, redeliver)', () => {
    expect(bodiless.map((operation) => operation.operationId)).toEqual(expect.arrayContaining(['voidCharge', 'cancelCharge', 'redeliverWebhookDelivery']));
  });
  test.each(bodiless.map((operation) => [name(operation), operation] as const))('%s: JSON in a charset or encoding it cannot read is 415, broken JSON 400, both documented', async (_name, operation) => {
    for (const unreadable of [{ 'content-type': 'application/json; charset=latin1' }, { 'content-type': 'application/json', 'content-encoding': 'compress' }] as Record<string, string>[]) {
      const refused = await fetch(urlOf(operation), { method: 'POST', headers: headers(unreadable), body: '{}' });
      expect(refused.status).toBe(415);
      await expectDocumented(operation, refused);
    }
    const broken = await fetch(urlOf(operation), { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: '{"reason":' });
    expect(broken.status).toBe(400);
    await expectDocumented(operation, broken);
  });
});

describe('a method the path does not have', () => {
  test.each(all.map((operation) => [name(operation), operation] as const))('%s: a documented answer', async (_name, operation) => {
    const wrong = METHODS.find((method) => !operation.pathMethods.includes(method))!;
    const response = await fetch(urlOf(operation), {
      method: wrong.toUpperCase(),
      headers: headers(wrong === 'get' || wrong === 'delete' ? {} : { 'content-type': 'application/json' }),
      body: wrong === 'get' || wrong === 'delete' ? undefined : '{}',
      redirect: 'manual',
    });
    if (api(operation)) expect(response.status).toBe(405);
    await expectDocumented(operation, response);
  });
});

describe('a body over 10 MB', () => {
  test('POST /customers: 413, documented', async () => {
    const operation = all.find((candidate) => candidate.operationId === 'createCustomer')!;
    const response = await fetch(urlOf(operation), {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ name: 'x'.repeat(10 * 1024 * 1024) }),
    });
    expect(response.status).toBe(413);
    await expectDocumented(operation, response);
  });
});
