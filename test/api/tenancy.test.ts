import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const body = (external_id: string) => ({ name: 'Maria Gonzalez', email: 'maria.gonzalez@mail.debt-collection.example', external_id });

describe('tenancy: an organization and an environment see only their own data', () => {
  test('another organization and the other environment get 404 by id and by external_id, and never see it in a list', async () => {
    const { data } = await app.api.POST('/customers', { body: body('TENANT-1') });
    const customer = data!.data;
    for (const outsider of [app.other, app.sandbox]) {
      for (const key of [customer.id, 'TENANT-1']) {
        const read = await outsider.GET('/customers/{id}', { params: { path: { id: key } } });
        expect(read.response.status).toBe(404);
        const update = await outsider.PUT('/customers/{id}', { params: { path: { id: key } }, body: { name: 'Hijacked' } });
        expect(update.response.status).toBe(404);
        const remove = await outsider.DELETE('/customers/{id}', { params: { path: { id: key } } });
        expect(remove.response.status).toBe(404);
        const addresses = await outsider.GET('/customers/{id}/addresses', { params: { path: { id: key } } });
        expect(addresses.response.status).toBe(404);
      }
      const list = await outsider.GET('/customers', { params: { query: { limit: 500 } } });
      expect(list.data!.data.map((c) => c.id)).not.toContain(customer.id);
    }
    const mine = await app.api.GET('/customers/{id}', { params: { path: { id: customer.id } } });
    expect(mine.data!.data.name).toBe('Maria Gonzalez');
  });

  test('the same external_id may exist in another organization and in the other environment', async () => {
    const results = await Promise.all([app.api, app.other, app.sandbox].map((client) => client.POST('/customers', { body: body('SHARED-7') })));
    expect(results.map((result) => result.response.status)).toEqual([201, 201, 201]);
    const ids = new Set(results.map((result) => result.data!.data.id));
    expect(ids.size).toBe(3);
    const sandboxCopy = await app.sandbox.GET('/customers/{id}', { params: { path: { id: 'SHARED-7' } } });
    expect(sandboxCopy.data!.data.id).toBe(results[2]!.data!.data.id);
  });
});

describe('authentication', () => {
  test.each([
    ['no Authorization header', undefined],
    ['an unknown token', 'Bearer dcs_live_unknown'],
    ['a token without the Bearer scheme', 'TOKEN'],
    ['an empty bearer', 'Bearer '],
  ])('with %s, answers 401 in the error shape', async (_label, authorization) => {
    const response = await fetch(`${app.baseUrl}/customers`, { headers: authorization ? { authorization } : {} });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'unauthenticated' });
  });
});
