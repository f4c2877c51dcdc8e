import type { ApiClient, Schemas } from '../../client';
import { createOrganization } from '../../server/organizations/organization-repo';
import { newCustomer, unique, UNKNOWN_UUID } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const lakeside = <T extends object>(body: T) => ({ name: 'Lakeside Medical Center', ...body });

/** Creates a location through the API (Lakeside Medical Center unless `body` says otherwise). */
async function newLocation(body: Partial<Schemas['LocationCreate']> = {}, client: ApiClient = app.api) {
  const { data, response, error } = await client.POST('/locations', { body: lakeside(body) });
  if (response.status !== 201) throw new Error(`location create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

const total = async (client: ApiClient = app.api) => (await client.GET('/locations', { params: { query: { limit: 1 } } })).data!.meta.total;
const get = (key: string, client: ApiClient = app.api) => client.GET('/locations/{id}', { params: { path: { id: key } } });
const fieldsOf = (error: unknown) => Object.keys((error as { errors: object }).errors);

/** A debt account at the location, made through the API. */
async function accountAt(locationId: string): Promise<string> {
  const customer = await newCustomer(app.api);
  const { data, response, error } = await app.api.POST('/debt-accounts', {
    body: { customer_id: customer.id, location_id: locationId, balance: 0 },
  });
  if (response.status !== 201) throw new Error(`account create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data.id;
}

/** Gives the account the location as its additional one, through the API (by the location's external_id). */
async function attachAdditional(debtAccountId: string, locationId: string): Promise<void> {
  let location = (await get(locationId)).data!.data;
  if (!location.external_id) {
    location = (await app.api.PUT('/locations/{id}', { params: { path: { id: locationId } }, body: { external_id: unique('LOC') } })).data!.data;
  }
  const { response } = await app.api.PUT('/debt-accounts/{id}', {
    params: { path: { id: debtAccountId } },
    body: { balance: 0, locations: [{ name: location.name, external_id: location.external_id! }] },
  });
  if (response.status !== 200) throw new Error(`attach failed: ${response.status}`);
}

/**
 * The race test needs an account insert that stays uncommitted while the deletion runs, which
 * the API cannot hold open; it writes the row the API would write, in its own transaction.
 */
async function insertAccountRow(locationId: string, trx: typeof app.db): Promise<void> {
  const customer = await newCustomer(app.api);
  await trx('debt_accounts').insert({
    organization_id: app.organization.organization_id,
    environment: 'production',
    customer_id: customer.id,
    location_id: locationId,
    balance: 0,
    current_balance: 0,
  });
}

describe('POST /locations', () => {
  test('creates a location with the defaults: original_creditor, card and ach true, no accounts', async () => {
    const { data, response } = await app.api.POST('/locations', { body: { name: 'Lakeside Medical Center' } });
    expect(response.status).toBe(201);
    const location = data!.data;
    expect(location).toEqual({
      id: expect.any(String),
      name: 'Lakeside Medical Center',
      type: 'original_creditor',
      external_id: null,
      rules: {},
      card: true,
      ach: true,
      metadata: [],
      debt_accounts_count: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await get(location.id)).data!.data).toEqual(location);
  });

  test('stores every field given', async () => {
    const externalId = unique('LOC-SUMMIT');
    const location = await newLocation({
      name: 'Summit Recovery Partners',
      external_id: externalId,
      type: 'current_creditor',
      card: false,
      ach: false,
      metadata: { region: 'midwest', intake: 'letters' },
    });
    expect(location).toMatchObject({
      name: 'Summit Recovery Partners',
      external_id: externalId,
      type: 'current_creditor',
      card: false,
      ach: false,
      metadata: [
        { attribute: 'intake', value: 'letters' },
        { attribute: 'region', value: 'midwest' },
      ],
    });
  });

  test.each([1, 255])('accepts a name of %i characters', async (length) => {
    const location = await newLocation({ name: 'n'.repeat(length) });
    expect(location.name).toBe('n'.repeat(length));
  });

  test.each([
    ['an empty name', { name: '' }, 'name'],
    ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name'],
    ['no name', { name: undefined }, 'name'],
    ['an unknown type', { type: 'debt_buyer' }, 'type'],
    ['an unknown field', { rules: { min_payment_amount: 100 } }, 'rules'],
    ['an empty external_id', { external_id: '' }, 'external_id'],
    ['card as a string', { card: 'true' }, 'card'],
    ['a metadata value of 256 characters', { metadata: { region: 'v'.repeat(256) } }, 'metadata.region'],
  ])('when given %s, answers 422 naming the field and stores nothing', async (_label, body, field) => {
    const before = await total();
    const { response, error } = await app.api.POST('/locations', { body: lakeside(body) as never });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errorCode: 'validation_failed', error: expect.any(String) });
    expect(fieldsOf(error)).toContain(field);
    expect(await total()).toBe(before);
  });

  test('when the external_id is taken, answers 422 "has already been taken" and stores nothing', async () => {
    const externalId = unique('LOC-LAKESIDE');
    await newLocation({ external_id: externalId });
    const before = await total();
    const { response, error } = await app.api.POST('/locations', { body: lakeside({ external_id: externalId }) });
    expect(response.status).toBe(422);
    expect(error).toEqual({
      error: expect.any(String),
      errorCode: 'validation_failed',
      errors: { external_id: ['has already been taken'] },
    });
    expect(await total()).toBe(before);
  });

  test('when creates race for one external_id, exactly one wins and the others get 422', async () => {
    const externalId = unique('LOC-RACE');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => app.api.POST('/locations', { body: lakeside({ external_id: externalId }) })),
    );
    expect(results.map((result) => result.response.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
    for (const result of results.filter((r) => r.response.status === 422)) {
      expect(result.error).toMatchObject({ errors: { external_id: ['has already been taken'] } });
    }
    const winner = results.find((result) => result.response.status === 201)!.data!.data;
    expect((await get(externalId)).data!.data.id).toBe(winner.id);
  });
});

describe('GET /locations/{id}', () => {
  test('finds a location by id and by external_id', async () => {
    const externalId = unique('LOC-NORTHSTAR');
    const created = await newLocation({ name: 'Northstar Dental Group', external_id: externalId });
    for (const key of [created.id, externalId]) {
      const { data, response } = await get(key);
      expect(response.status).toBe(200);
      expect(data!.data).toEqual(created);
    }
  });

  test.each([UNKNOWN_UUID, 'LOC-NO-SUCH'])('an unknown location (%s) answers 404 in the error shape', async (key) => {
    const { response, error } = await get(key);
    expect(response.status).toBe(404);
    expect(error).toEqual({ error: expect.any(String), errorCode: 'not_found' });
  });
});

describe('GET /locations', () => {
  // A fresh organization, so that the counts of the page are exact.
  let client: ApiClient;
  let names: string[];
  beforeAll(async () => {
    const organization = await createOrganization(app.db, 'Paging Collections', 'ops@paging.example');
    client = app.clientFor(organization.production_token);
    names = ['Lakeside Medical Center', 'Northstar Dental Group', 'Summit Recovery Partners'];
    for (const name of names) await newLocation({ name }, client);
  });

  test('limit 1 answers the oldest location, with meta and links of three pages', async () => {
    const { data, response } = await client.GET('/locations', { params: { query: { limit: 1 } } });
    expect(response.status).toBe(200);
    expect(data!.data.map((location) => location.name)).toEqual([names[0]]);
    expect(data!.meta).toMatchObject({ current_page: 1, from: 1, to: 1, last_page: 3, per_page: 1, total: 3 });
    expect(new URL(data!.meta.path).pathname).toBe('/api/v1/locations');
    expect(data!.meta.from_submitted_date).toBe(data!.data[0]!.created_at);
    expect(data!.links.prev).toBeNull();
    expect(Object.fromEntries(new URL(data!.links.next!).searchParams)).toEqual({ page: '2', limit: '1' });
    expect(Object.fromEntries(new URL(data!.links.last).searchParams)).toEqual({ page: '3', limit: '1' });
    const second = await client.GET('/locations', { params: { query: { limit: 1, page: 2 } } });
    expect(second.data!.data.map((location) => location.name)).toEqual([names[1]]);
  });

  test('limit 500 answers every location, oldest first, on one page', async () => {
    const { data } = await client.GET('/locations', { params: { query: { limit: 500 } } });
    expect(data!.data.map((location) => location.name)).toEqual(names);
    expect(data!.data.every((location) => location.debt_accounts_count === 0)).toBe(true);
    expect(data!.meta).toMatchObject({ current_page: 1, from: 1, to: 3, last_page: 1, per_page: 500, total: 3 });
    expect(data!.links.next).toBeNull();
  });

  test.each([0, 501])('limit %i answers 422 on query.limit', async (limit) => {
    const { response, error } = await client.GET('/locations', { params: { query: { limit } } });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['query.limit']);
  });
});

describe('PUT /locations/{id}', () => {
  test('changes only the fields given, and answers the location as get does', async () => {
    const externalId = unique('LOC-LAKESIDE');
    const created = await newLocation({ external_id: externalId, metadata: { region: 'midwest' } });
    const { data, response } = await app.api.PUT('/locations/{id}', {
      params: { path: { id: externalId } },
      body: { name: 'Lakeside Regional Medical Center' },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toEqual({ ...created, name: 'Lakeside Regional Medical Center', updated_at: expect.any(String) });
    expect((await get(created.id)).data!.data).toEqual(data!.data);
  });

  test('changes type, card and ach', async () => {
    const created = await newLocation();
    const { data } = await app.api.PUT('/locations/{id}', {
      params: { path: { id: created.id } },
      body: { type: 'product_type', card: false, ach: false },
    });
    expect(data!.data).toMatchObject({ type: 'product_type', card: false, ach: false, name: created.name });
  });

  test('metadata: a new value replaces, an empty value deletes a key, others are kept', async () => {
    const created = await newLocation({ metadata: { keep: 'k', change: 'old', drop: 'd', gone: 'g' } });
    const { data } = await app.api.PUT('/locations/{id}', {
      params: { path: { id: created.id } },
      body: { metadata: { change: 'new', drop: '', gone: null, add: 'a' } },
    });
    expect(data!.data.metadata).toEqual([
      { attribute: 'add', value: 'a' },
      { attribute: 'change', value: 'new' },
      { attribute: 'keep', value: 'k' },
    ]);
  });

  test.each([
    ['{}', {}],
    ['null', null],
  ])('metadata %s deletes all metadata', async (_label, metadata) => {
    const created = await newLocation({ metadata: { a: '1', b: '2' } });
    const { data } = await app.api.PUT('/locations/{id}', { params: { path: { id: created.id } }, body: { metadata } });
    expect(data!.data.metadata).toEqual([]);
  });

  test('without metadata, the metadata is kept', async () => {
    const created = await newLocation({ metadata: { a: '1' } });
    const { data } = await app.api.PUT('/locations/{id}', { params: { path: { id: created.id } }, body: { ach: false } });
    expect(data!.data.metadata).toEqual([{ attribute: 'a', value: '1' }]);
  });

  test('a new external_id addresses the location from then on; the old one no longer does', async () => {
    const old = unique('LOC-OLD');
    const created = await newLocation({ external_id: old });
    const renamed = unique('LOC-NEW');
    const { response } = await app.api.PUT('/locations/{id}', { params: { path: { id: old } }, body: { external_id: renamed } });
    expect(response.status).toBe(200);
    expect((await get(renamed)).data!.data.id).toBe(created.id);
    expect((await get(old)).response.status).toBe(404);
  });

  test('taking another location’s external_id answers 422 and changes nothing; keeping one’s own is fine', async () => {
    const taken = unique('LOC-TAKEN');
    await newLocation({ external_id: taken });
    const own = unique('LOC-OWN');
    const created = await newLocation({ external_id: own });
    const clash = await app.api.PUT('/locations/{id}', {
      params: { path: { id: created.id } },
      body: { name: 'Changed', external_id: taken },
    });
    expect(clash.response.status).toBe(422);
    expect(clash.error).toMatchObject({ errorCode: 'validation_failed', errors: { external_id: ['has already been taken'] } });
    expect((await get(created.id)).data!.data).toEqual(created);
    const same = await app.api.PUT('/locations/{id}', { params: { path: { id: created.id } }, body: { external_id: own } });
    expect(same.response.status).toBe(200);
  });

  test.each([
    ['external_id null (it cannot be cleared)', { external_id: null }, 'external_id'],
    ['an empty external_id', { external_id: '' }, 'external_id'],
    ['an empty name', { name: '' }, 'name'],
    ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name'],
    ['an unknown type', { type: 'debt_buyer' }, 'type'],
    ['rules (not settable yet)', { rules: {} }, 'rules'],
  ])('when given %s, answers 422 naming the field and changes nothing', async (_label, body, field) => {
    const created = await newLocation({ external_id: unique('LOC-KEEP') });
    const { response, error } = await app.api.PUT('/locations/{id}', { params: { path: { id: created.id } }, body: body as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toContain(field);
    expect((await get(created.id)).data!.data).toEqual(created);
  });

  test('an unknown location answers 404', async () => {
    const { response, error } = await app.api.PUT('/locations/{id}', { params: { path: { id: 'LOC-NO-SUCH' } }, body: { name: 'x' } });
    expect(response.status).toBe(404);
    expect(error).toEqual({ error: expect.any(String), errorCode: 'not_found' });
  });
});

describe('DELETE /locations/{id}', () => {
  test('deletes the location; then get and a second delete answer 404', async () => {
    const externalId = unique('LOC-GONE');
    const created = await newLocation({ external_id: externalId });
    const { data, response } = await app.api.DELETE('/locations/{id}', { params: { path: { id: externalId } } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ success: true });
    expect((await get(created.id)).response.status).toBe(404);
    const again = await app.api.DELETE('/locations/{id}', { params: { path: { id: created.id } } });
    expect(again.response.status).toBe(404);
  });

  test('debt_accounts_count counts accounts at the location and accounts with it as an additional one, each once', async () => {
    const location = await newLocation();
    const other = await newLocation({ name: 'Northstar Dental Group' });
    await accountAt(location.id);
    await attachAdditional(await accountAt(other.id), location.id);
    // An account with the location both as its own and as an additional one counts once.
    await attachAdditional(await accountAt(location.id), location.id);
    expect((await get(location.id)).data!.data.debt_accounts_count).toBe(3);
    expect((await get(other.id)).data!.data.debt_accounts_count).toBe(1);
    const { data } = await app.api.GET('/locations', { params: { query: { limit: 500 } } });
    expect(data!.data.find((item) => item.id === location.id)!.debt_accounts_count).toBe(3);
  });

  test('while a debt account is at the location, answers 409 and the location stays', async () => {
    const location = await newLocation({ external_id: unique('LOC-USED') });
    const accountId = await accountAt(location.id);
    const { response, error } = await app.api.DELETE('/locations/{id}', { params: { path: { id: location.id } } });
    expect(response.status).toBe(409);
    expect(error).toEqual({ error: expect.stringContaining('detach or move those accounts first'), errorCode: 'conflict' });
    expect((await get(location.id)).data!.data).toMatchObject({ id: location.id, debt_accounts_count: 1 });
    // Once no account uses it, it can go: the 409 was about the account, nothing else.
    await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: accountId } } });
    expect((await app.api.DELETE('/locations/{id}', { params: { path: { id: location.id } } })).response.status).toBe(200);
  });

  test('while a debt account has it as an additional location, answers 409 and the location stays', async () => {
    const location = await newLocation();
    const elsewhere = await newLocation({ name: 'Summit Recovery Partners' });
    await attachAdditional(await accountAt(elsewhere.id), location.id);
    const { response, error } = await app.api.DELETE('/locations/{id}', { params: { path: { id: location.id } } });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ errorCode: 'conflict' });
    expect((await get(location.id)).data!.data.debt_accounts_count).toBe(1);
  });

  test('when an account is tied to the location while the deletion runs, answers 409 and the location stays', async () => {
    const location = await newLocation();
    const trx = await app.db.transaction();
    try {
      // The uncommitted account holds a key-share lock on the location, so the deletion waits for it.
      await insertAccountRow(location.id, trx);
      const deletion = app.api.DELETE('/locations/{id}', { params: { path: { id: location.id } } });
      await waitForLockWait();
      await trx.commit();
      const { response, error } = await deletion;
      expect(response.status).toBe(409);
      expect(error).toMatchObject({ errorCode: 'conflict' });
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
    }
    expect((await get(location.id)).data!.data.debt_accounts_count).toBe(1);
  });
});

/** Resolves once some session of this database waits for a row lock. */
async function waitForLockWait(): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const { rows } = await app.db.raw<{ rows: { waiting: string }[] }>(
      `SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    if (Number(rows[0]!.waiting) > 0) return;
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error('the deletion never waited for the account’s lock');
}

describe('tenancy', () => {
  test('another organization and the sandbox get 404 by id and by external_id, and never see it in a list', async () => {
    const externalId = unique('LOC-TENANT');
    const location = await newLocation({ external_id: externalId });
    for (const outsider of [app.other, app.sandbox]) {
      for (const key of [location.id, externalId]) {
        expect((await get(key, outsider)).response.status).toBe(404);
        const update = await outsider.PUT('/locations/{id}', { params: { path: { id: key } }, body: { name: 'Hijacked' } });
        expect(update.response.status).toBe(404);
        const remove = await outsider.DELETE('/locations/{id}', { params: { path: { id: key } } });
        expect(remove.response.status).toBe(404);
      }
      const list = await outsider.GET('/locations', { params: { query: { limit: 500 } } });
      expect(list.data!.data.map((item) => item.id)).not.toContain(location.id);
    }
    expect((await get(location.id)).data!.data).toEqual(location);
  });

  test('the same external_id may exist in another organization and in the sandbox', async () => {
    const externalId = unique('LOC-SHARED');
    const results = await Promise.all(
      [app.api, app.other, app.sandbox].map((client) => client.POST('/locations', { body: lakeside({ external_id: externalId }) })),
    );
    expect(results.map((result) => result.response.status)).toEqual([201, 201, 201]);
    expect(new Set(results.map((result) => result.data!.data.id)).size).toBe(3);
    expect((await get(externalId, app.sandbox)).data!.data.id).toBe(results[2]!.data!.data.id);
    expect((await get(externalId, app.other)).data!.data.id).toBe(results[1]!.data!.data.id);
  });
});
