/**
 * GET /events pages with a size ceiling: a page stops at EVENTS_PAGE_MAX_BYTES as well as at
 * `limit`, says so, and `links.next` continues right after its last event; following the links
 * returns every event once, in order.
 */
import type { Schemas } from '../../client';
import type { Tenant } from '../../server/kernel/tenant';
import { customerWithAccount, expectFieldError, UNKNOWN_UUID } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Page = Schemas['Event'][];
const tenantOf = (test: TestApp): Tenant => ({ organizationId: test.organization.organization_id, environment: 'production', tokenHash: '' });

/** A parent with `children` children (written as rows; their own creation events are not the point), and its account and customer. */
async function family(children: number) {
  const { customer, account: parent } = await customerWithAccount(app.api);
  await app.db.raw(
    `INSERT INTO debt_accounts (organization_id, environment, customer_id, location_id, parent_id, external_id, balance, current_balance)
     SELECT p.organization_id, p.environment, p.customer_id, p.location_id, p.id, p.external_id || '-C' || g, 1000 + g, 1000 + g
       FROM debt_accounts p, generate_series(1, ?::int) AS g WHERE p.id = ?`,
    [children, parent.id],
  );
  const childIds: string[] = (await app.db('debt_accounts').where({ parent_id: parent.id }).orderBy('external_id').select('id')).map((row: { id: string }) => row.id);
  return { customer, parent, childIds };
}

/** GET /events through the client, as text too (the answer's size is the point). */
async function getPage(query: Record<string, string | number>) {
  const { data, response } = await app.api.GET('/events', { params: { query: query as never }, parseAs: 'text' });
  expect(response.status).toBe(200);
  const text = data as unknown as string;
  return { bytes: Buffer.byteLength(text, 'utf8'), body: JSON.parse(text) as { data: Page; truncated: boolean; meta: Schemas['PaginationMeta']; links: Schemas['PaginationLinks'] } };
}

const queryOf = (link: string) => Object.fromEntries(new URL(link).searchParams.entries());

describe('GET /events with a 1,000-child family', () => {
  let familyEvents: number;
  beforeAll(async () => {
    const { customer, parent, childIds } = await family(1000);
    // Events that embed the whole family: the parent's, ten children's (each embeds its parent and
    // so every sibling) and the customer's; then many small ones around them.
    familyEvents = 1 + 10 + 1;
    await app.db.transaction(async (trx) => {
      await app.deps.events.record(trx, tenantOf(app), [{ name: 'location.update', ids: Array(300).fill(parent.location!.id) }]);
      await app.deps.events.record(trx, tenantOf(app), [
        { name: 'debt-account.update', ids: [parent.id, ...childIds.slice(0, 10)] },
        { name: 'customer.update', ids: [customer.id] },
      ]);
      await app.deps.events.record(trx, tenantOf(app), [{ name: 'location.update', ids: Array(400).fill(parent.location!.id) }]);
    });
  }, 120_000);

  test('every page at the largest limit stays under the ceiling, and following links.next returns each event once, in order', async () => {
    const ceiling = app.config.eventsPageMaxBytes;
    let { body, bytes } = await getPage({ limit: 500 });
    const total = body.meta.total;
    const seen: Page = [];
    const cut: number[] = [];
    for (let pages = 0; ; pages++) {
      expect(bytes).toBeLessThanOrEqual(ceiling);
      expect(body.data.length).toBeGreaterThan(0);
      expect(body.data.length).toBeLessThanOrEqual(500);
      expect(body.meta.from).toBe(seen.length + 1);
      if (body.truncated) cut.push(body.data.length);
      seen.push(...body.data);
      if (!body.links.next) break;
      expect(pages).toBeLessThan(500);
      ({ body, bytes } = await getPage(queryOf(body.links.next)));
    }
    // Nothing lost, nothing repeated, newest first throughout.
    expect(seen.length).toBe(total);
    expect(new Set(seen.map((event) => event.id)).size).toBe(total);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.sequence).toBeLessThan(seen[i - 1]!.sequence);
    // The family's events are what the ceiling cut: at least one page holds fewer than 500.
    expect(cut.length).toBeGreaterThan(0);
    expect(seen.filter((event) => event.type === 'debt-account.update' || event.type === 'customer.update')).toHaveLength(familyEvents);
    // A family event arrives whole: its children all there.
    const parentEvent = seen.find((event) => event.type === 'debt-account.update' && (event.data as unknown as { children?: unknown[] }).children?.length);
    expect((parentEvent!.data as unknown as { children: unknown[] }).children).toHaveLength(1000);
  });

  test('the same events as one page per event: the payloads are the recorded ones, byte for byte', async () => {
    const { body: first } = await getPage({ limit: 500 });
    const one = await app.api.GET('/events/{id}', { params: { path: { id: first.data[0]!.id } } });
    expect(first.data[0]).toEqual(one.data!.data);
  });

  test('starting_after reads the events after one, with their positions; page must then be 1', async () => {
    const { body: all } = await getPage({ limit: 20, type: 'location.update' });
    const { body: after } = await getPage({ limit: 5, type: 'location.update', starting_after: all.data[9]!.id });
    expect(after.data.map((event) => event.id)).toEqual(all.data.slice(10, 15).map((event) => event.id));
    expect(after.meta).toMatchObject({ from: 11, to: 15, current_page: 3, per_page: 5, total: all.meta.total });
    expect(after.truncated).toBe(false);
    expect(after.links.prev).toBeNull();
    expect(queryOf(after.links.next!)).toEqual({ limit: '5', type: 'location.update', starting_after: all.data[14]!.id });

    const wrongPage = await app.api.GET('/events', { params: { query: { starting_after: all.data[0]!.id, page: 2 } } });
    expect(wrongPage.response.status).toBe(422);
    expectFieldError(wrongPage.error, 'query.page');
    const unknown = await app.api.GET('/events', { params: { query: { starting_after: UNKNOWN_UUID } } });
    expect(unknown.response.status).toBe(422);
    expectFieldError(unknown.error, 'query.starting_after');
    const otherTenant = await app.other.GET('/events', { params: { query: { starting_after: all.data[0]!.id } } });
    expect(otherTenant.response.status).toBe(422);
  });
});
