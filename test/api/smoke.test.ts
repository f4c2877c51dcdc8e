import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

test('creates and reads a customer', async () => {
  const created = await app.api.POST('/customers', { body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example' } });
  expect(created.response.status).toBe(201);
  const read = await app.api.GET('/customers/{id}', { params: { path: { id: created.data!.data.id } } });
  expect(read.data?.data.name).toBe('Maria Gonzalez');
});
