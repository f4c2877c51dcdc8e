import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const CARD = '4242424242424242';
const CVC = '9731';
const ACCOUNT = '000123456789';
const ROUTING = '011000015';

describe('logs', () => {
  test('never contain a token, card number, security code, routing or account number, and every request line has its id', async () => {
    const { data } = await app.api.POST('/customers', { body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' } });
    const id = data!.data.id;
    const card = { card_holder: 'Maria Gonzalez', card_number: CARD, card_expiration_month: 12, card_expiration_year: 40, card_security_code: CVC };
    const ach = { account_holder: 'Maria Gonzalez', account_type: 'checking' as const, routing_number: ROUTING, account_number: ACCOUNT, account_zip: '78704', account_state: 'TX' };
    await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id } }, body: { card } });
    await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id } }, body: { ach } });
    // Rejected requests, whose error paths log too.
    await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id } }, body: { card, ach } as never });
    await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: 'missing' } }, body: { card } });
    await fetch(`${app.baseUrl}/customers/${id}/payment-methods`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.organization.production_token}`, 'content-type': 'application/json' },
      body: `{"card": {"card_number": "${CARD}", "card_security_code": "${CVC}"`,
    });
    await fetch(`${app.baseUrl}/customers?token=${app.organization.production_token}`, {
      headers: { authorization: `Bearer ${app.organization.production_token}x` },
    });

    const text = app.logs.join('');
    expect(app.logs.length).toBeGreaterThan(5);
    for (const secret of [app.organization.production_token, CARD, ACCOUNT, ROUTING]) expect(text).not.toContain(secret);
    // The security code as a whole value: a request id's hex may hold its four digits by chance.
    expect(text).not.toMatch(new RegExp(`(?<![0-9A-Za-z])${CVC}(?![0-9A-Za-z])`));
    const requestLines = app.logs.map((line) => JSON.parse(line) as { req?: { id?: string } }).filter((line) => line.req);
    expect(requestLines.length).toBeGreaterThanOrEqual(6);
    for (const line of requestLines) expect(line.req!.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('log lines', () => {
  test('a request line holds only its id, method, path without the query, status and time, and the work\'s request id, organization and environment', async () => {
    await fetch(`${app.baseUrl}/customers?limit=5`, { headers: { authorization: `Bearer ${app.organization.production_token}`, 'x-request-id': 'line-shape-1' } });
    const line = app.logs.map((text) => JSON.parse(text) as { req?: { id?: string } }).find((entry) => entry.req?.id === 'line-shape-1');
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: process.pid,
      hostname: expect.any(String),
      request_id: 'line-shape-1',
      organization_id: app.organization.organization_id,
      environment: 'production',
      req: { id: 'line-shape-1', method: 'GET', path: '/api/v1/customers' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
  });

  test('any other line that carries a secret by another road has it censored', () => {
    app.deps.logger.warn({ payment: { card_number: CARD, card_security_code: CVC }, hook: { secret: 'whsec_1' }, token: 'dcs_live_x' }, 'odd line');
    const line = JSON.parse(app.logs.find((text) => text.includes('odd line'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ payment: { card_number: '[redacted]', card_security_code: '[redacted]' }, hook: { secret: '[redacted]' }, token: '[redacted]' });
    expect(JSON.stringify(line)).not.toContain(CARD);
  });
});

describe('X-Request-Id', () => {
  const get = (requestId?: string) =>
    fetch(`${app.baseUrl}/customers`, {
      headers: { authorization: `Bearer ${app.organization.production_token}`, ...(requestId === undefined ? {} : { 'x-request-id': requestId }) },
    });
  const loggedIds = () => app.logs.map((line) => (JSON.parse(line) as { req?: { id?: string } }).req?.id).filter(Boolean);

  test("a well-formed one from a load balancer is kept: answered back and on the request's log line", async () => {
    for (const id of ['lb-7f3c9a2e.0001:edge-2', 'a', 'x'.repeat(200), 'f2b8c6d0-1c7e-4b7a-9d55-3f1e2a4b6c8d']) {
      const response = await get(id);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toBe(id);
      expect(loggedIds()).toContain(id);
    }
  });

  test('an absent or malformed one is replaced by a new UUID', async () => {
    for (const id of [undefined, '', 'x'.repeat(201), 'two words', 'id"},"level":60', 'naïve']) {
      const response = await get(id);
      const answered = response.headers.get('x-request-id')!;
      expect(answered).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(loggedIds()).toContain(answered);
    }
  });
});
