/**
 * Location.debt_accounts_count is a counter kept by the database in the transactions that
 * attach and detach accounts. After every kind of change, each location's counter must equal
 * a real count of the accounts that use it.
 */
import type { Schemas } from '../../client';
import { newCustomer, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import type { Workers } from '../../server/workers';

let app: TestApp;
let workers: Workers;
beforeAll(async () => {
  app = await startTestApp();
  workers = await app.startWorkers();
});
afterAll(async () => {
  await workers?.stop();
  await app?.stop();
});

/** Every location's counter next to a count of its accounts (own location plus additional ones). */
async function countersAndCounts(): Promise<{ counter: number; count: number }[]> {
  const { rows } = await app.db.raw<{ rows: { counter: number; count: string }[] }>(`
    SELECT l.debt_accounts_count AS counter,
           (SELECT count(*) FROM debt_accounts a WHERE a.location_id = l.id)
         + (SELECT count(*) FROM debt_account_locations x WHERE x.location_id = l.id) AS count
      FROM locations l ORDER BY l.id`);
  return rows.map((row) => ({ counter: row.counter, count: Number(row.count) }));
}

async function expectCountersExact(): Promise<void> {
  const rows = await countersAndCounts();
  expect(rows.length).toBeGreaterThan(0);
  expect(rows.map((row) => row.counter)).toEqual(rows.map((row) => row.count));
}

async function account(body: Partial<Schemas['DebtAccountCreate']>) {
  const customer = await newCustomer(app.api);
  const { data, response, error } = await app.api.POST('/debt-accounts', { body: { customer_id: customer.id, balance: 1000, ...body } as Schemas['DebtAccountCreate'] });
  if (response.status !== 201) throw new Error(`account create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

const countOf = async (locationId: string) => (await app.api.GET('/locations/{id}', { params: { path: { id: locationId } } })).data!.data.debt_accounts_count;

test('creating, moving, re-pointing and deleting accounts keeps every counter equal to a real count', async () => {
  const home = unique('LOC');
  const extra = unique('LOC');
  const first = await account({ location_id: home, location_name: 'Lakeside Medical Center', locations: [{ name: 'Summit Recovery Partners', external_id: extra }] });
  const second = await account({ location_id: home, location_name: 'Lakeside Medical Center' });
  const homeId = first.location!.id;
  expect(await countOf(homeId)).toBe(2);
  await expectCountersExact();

  // Moved to the additional location: the home loses it, the other gains it as its own.
  const moved = await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: second.id } }, body: { balance: 1000, location_id: extra, locations: [] } });
  expect(moved.response.status).toBe(200);
  expect(await countOf(homeId)).toBe(1);
  await expectCountersExact();

  // Additional locations replaced, then emptied.
  await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: first.id } }, body: { balance: 1000, locations: [{ name: 'Other', external_id: unique('LOC') }] } });
  await expectCountersExact();
  await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: first.id } }, body: { balance: 1000, locations: [] } });
  await expectCountersExact();

  // A balance change alone leaves every counter as it was.
  const before = await countersAndCounts();
  await app.api.PUT('/debt-accounts/{id}', { params: { path: { id: first.id } }, body: { balance: 5000 } });
  expect(await countersAndCounts()).toEqual(before);

  expect((await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: first.id } } })).response.status).toBe(200);
  expect((await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: second.id } } })).response.status).toBe(200);
  expect(await countOf(homeId)).toBe(0);
  await expectCountersExact();
  // With no account left, the location can go.
  expect((await app.api.DELETE('/locations/{id}', { params: { path: { id: homeId } } })).response.status).toBe(200);
});

test('accounts created at once on one location are all counted', async () => {
  const shared = unique('LOC');
  const created = await account({ location_id: shared, location_name: 'Harbor Credit Union' });
  await Promise.all(Array.from({ length: 12 }, () => account({ location_id: created.location!.id })));
  expect(await countOf(created.location!.id)).toBe(13);
  await expectCountersExact();
});

test('a bulk import counts its accounts on their location', async () => {
  const prefix = unique('BULK');
  const items: Schemas['BulkItem'][] = Array.from({ length: 30 }, (_, i) => ({
    customer: { name: `Customer ${i}`, email: `customer${i}@mail.debt-collection.example`, external_id: `${prefix}-C-${i}` },
    location: { name: 'Lakeside Medical Center', external_id: `${prefix}-LOC` },
    parent_debt_accounts: [{ external_id: `${prefix}-P-${i}`, balance: 0 }],
    debt_accounts: [{ external_id: `${prefix}-A-${i}`, parent_external_id: `${prefix}-P-${i}`, balance: 1000 }],
  }));
  const { data, response } = await app.api.POST('/bulk', { body: items });
  expect(response.status).toBe(201);
  for (let attempt = 0; attempt < 300; attempt++) {
    const progress = await app.api.GET('/bulk/{id}', { params: { path: { id: data!.data.bulk_id } } });
    if (progress.data!.data.status === 'completed') break;
    await new Promise((done) => setTimeout(done, 100));
  }
  const location = (await app.api.GET('/locations/{id}', { params: { path: { id: `${prefix}-LOC` } } })).data!.data;
  expect(location.debt_accounts_count).toBe(60);
  await expectCountersExact();
});
