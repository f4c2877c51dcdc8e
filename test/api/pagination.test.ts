import type { ApiClient } from '../../client';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let client: ApiClient;
const TOTAL = 23;

beforeAll(async () => {
  app = await startTestApp();
  // The sandbox of this file's organization holds exactly TOTAL customers.
  client = app.sandbox;
  for (let i = 1; i <= TOTAL; i++) {
    await client.POST('/customers', { body: { name: `Customer ${String(i).padStart(2, '0')}`, email: `c${i}@mail.debt-collection.example` } });
  }
});
afterAll(async () => app?.stop());

describe('GET /customers paging', () => {
  test('defaults to page 1 of 10, oldest first, with meta and links', async () => {
    const { data } = await client.GET('/customers');
    expect(data!.data.map((c) => c.name)).toEqual(Array.from({ length: 10 }, (_, i) => `Customer ${String(i + 1).padStart(2, '0')}`));
    expect(data!.meta).toMatchObject({ current_page: 1, from: 1, to: 10, last_page: 3, per_page: 10, total: TOTAL });
    expect(data!.meta.path).toBe(`${app.baseUrl}/customers`);
    expect(data!.meta.from_submitted_date).toBe(data!.data[0]!.created_at);
    expect(data!.meta.to_submitted_date).toBe(data!.data[9]!.created_at);
    expect(data!.links.prev).toBeNull();
    expect(new URL(data!.links.next!).searchParams.get('page')).toBe('2');
    expect(new URL(data!.links.last).searchParams.get('page')).toBe('3');
  });

  test('the last page holds the rest; next is null there', async () => {
    const { data } = await client.GET('/customers', { params: { query: { page: 3 } } });
    expect(data!.data).toHaveLength(3);
    expect(data!.meta).toMatchObject({ from: 21, to: 23 });
    expect(data!.links.next).toBeNull();
    expect(new URL(data!.links.prev!).searchParams.get('page')).toBe('2');
  });

  test('a page past the last answers an empty list with null from and to', async () => {
    const { data } = await client.GET('/customers', { params: { query: { page: 9 } } });
    expect(data!.data).toEqual([]);
    expect(data!.meta).toMatchObject({ from: null, to: null, from_submitted_date: null, to_submitted_date: null, total: TOTAL });
  });

  test('links keep every query parameter and change only page', async () => {
    const { data } = await client.GET('/customers', { params: { query: { page: 2, limit: 5, include: 'metadata' } } });
    const next = new URL(data!.links.next!);
    expect(Object.fromEntries(next.searchParams)).toEqual({ page: '3', limit: '5', include: 'metadata' });
    const followed = await fetch(next, { headers: { authorization: `Bearer ${app.organization.sandbox_token}` } });
    const page3 = (await followed.json()) as { data: { name: string }[] };
    expect(page3.data.map((c) => c.name)).toEqual(['Customer 11', 'Customer 12', 'Customer 13', 'Customer 14', 'Customer 15']);
  });

  test.each([1, 500])('limit %i is accepted', async (limit) => {
    const { data, response } = await client.GET('/customers', { params: { query: { limit } } });
    expect(response.status).toBe(200);
    expect(data!.data).toHaveLength(Math.min(limit, TOTAL));
    expect(data!.meta.per_page).toBe(limit);
  });

  test.each([
    ['limit 0', { limit: 0 }, 'query.limit'],
    ['limit 501', { limit: 501 }, 'query.limit'],
    ['page 0', { page: 0 }, 'query.page'],
  ])('%s answers 422 naming the parameter', async (_label, query, field) => {
    const { response, error } = await client.GET('/customers', { params: { query } });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toEqual([field]);
  });
});
