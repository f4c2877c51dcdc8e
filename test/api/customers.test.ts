import { maria, newCustomer, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

describe('POST /customers', () => {
  test('creates a customer with an address and metadata, naming the address list `address`', async () => {
    const externalId = unique('CUST');
    const { data, response } = await app.api.POST('/customers', {
      body: {
        ...maria(),
        external_id: externalId,
        phone: '(512) 555-0147',
        date_of_birth: '1984-07-19',
        ssn_last4: '0427',
        address: { line1: '1200 Barton Springs Rd', city: 'Austin', state: 'TX', country: 'US', postal_code: '78704' },
        metadata: { portfolio: 'spring-2026' },
      },
    });
    expect(response.status).toBe(201);
    const customer = data!.data;
    expect(customer).toMatchObject({
      external_id: externalId,
      name: 'Maria Gonzalez',
      phone: '(512) 555-0147',
      date_of_birth: '1984-07-19',
      ssn: '0427',
      metadata: [{ attribute: 'portfolio', value: 'spring-2026' }],
    });
    expect(customer.address).toHaveLength(1);
    expect(customer.address![0]).toMatchObject({ postal_code: '78704', city: 'Austin', is_primary: true });
    expect('addresses' in customer).toBe(false);
  });

  test('keeps the leading zero of an integer ssn_last4: 427 reads back as 0427', async () => {
    const customer = await newCustomer(app.api, { ssn_last4: 427 });
    expect(customer.ssn).toBe('0427');
  });

  test.each([
    ['ssn_last4 10000', { ssn_last4: 10000 }, 'ssn_last4'],
    ['ssn_last4 "123"', { ssn_last4: '123' }, 'ssn_last4'],
    ['a 4-digit address postal code', { address: { postal_code: '7870' } }, 'address.postal_code'],
    ['an address without postal code', { address: { city: 'Austin' } }, 'address.postal_code'],
    ['an invalid e-mail', { email: 'maria.gonzalez' }, 'email'],
    ['an empty name', { name: '' }, 'name'],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, 'name'],
    ['a phone that is not a US number', { phone: '555-0147' }, 'phone'],
    ['a metadata key of 256 characters', { metadata: { ['k'.repeat(256)]: 'v' } }, 'metadata'],
    ['a metadata value of 256 characters', { metadata: { k: 'v'.repeat(256) } }, 'metadata.k'],
    ['an unknown field', { nickname: 'Mari' }, 'nickname'],
  ])('when given %s, answers 422 naming the field and stores nothing', async (_label, body, field) => {
    const before = await app.api.GET('/customers', { params: { query: { limit: 1 } } });
    const { response, error } = await app.api.POST('/customers', { body: { ...maria(), ...body } as never });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errorCode: 'validation_failed', error: expect.any(String) });
    expect(Object.keys((error as { errors: object }).errors)).toContain(field);
    const after = await app.api.GET('/customers', { params: { query: { limit: 1 } } });
    expect(after.data!.meta.total).toBe(before.data!.meta.total);
  });

  test('accepts metadata keys and values of exactly 255 characters', async () => {
    const key = 'k'.repeat(255);
    const customer = await newCustomer(app.api, { metadata: { [key]: 'v'.repeat(255) } });
    expect(customer.metadata).toEqual([{ attribute: key, value: 'v'.repeat(255) }]);
  });

  test('when name and email are both missing, names both in one answer', async () => {
    const { response, error } = await app.api.POST('/customers', { body: {} as never });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors).sort()).toEqual(['email', 'name']);
  });

  test('when the date of birth is tomorrow, answers 422 on date_of_birth', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const { response, error } = await app.api.POST('/customers', { body: { ...maria(), date_of_birth: tomorrow } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errors: { date_of_birth: ['must not be in the future'] } });
  });

  test('when the external_id is taken, answers 422 "has already been taken"', async () => {
    const externalId = unique('CUST');
    await newCustomer(app.api, { external_id: externalId });
    const { response, error } = await app.api.POST('/customers', { body: { ...maria(), external_id: externalId } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errors: { external_id: ['has already been taken'] } });
  });

  test('when two creates race for one external_id, exactly one wins and the other gets 422', async () => {
    const externalId = unique('RACE');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => app.api.POST('/customers', { body: { ...maria(), external_id: externalId } })),
    );
    const statuses = results.map((result) => result.response.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422, 422]);
  });

  test('when the body is not JSON, answers 400 in the error shape', async () => {
    const response = await fetch(`${app.baseUrl}/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.organization.production_token}`, 'content-type': 'application/json' },
      body: '{"name": "Maria",',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: expect.any(String), errorCode: 'bad_request' });
  });
});

describe('GET /customers/{id}', () => {
  test('finds a customer by id and by external_id, with metadata and addresses by default', async () => {
    const externalId = unique('CUST');
    const created = await newCustomer(app.api, { external_id: externalId, address: { postal_code: '78704' }, metadata: { a: '1' } });
    for (const key of [created.id, externalId]) {
      const { data, response } = await app.api.GET('/customers/{id}', { params: { path: { id: key } } });
      expect(response.status).toBe(200);
      expect(data!.data.id).toBe(created.id);
      expect(data!.data.addresses).toHaveLength(1);
      expect(data!.data.metadata).toEqual([{ attribute: 'a', value: '1' }]);
    }
  });

  test('tries a UUID as id first, then as external_id', async () => {
    const first = await newCustomer(app.api);
    const second = await newCustomer(app.api, { external_id: first.id });
    const byId = await app.api.GET('/customers/{id}', { params: { path: { id: first.id } } });
    expect(byId.data!.data.id).toBe(first.id);
    await app.api.DELETE('/customers/{id}', { params: { path: { id: first.id } } });
    const byExternal = await app.api.GET('/customers/{id}', { params: { path: { id: first.id } } });
    expect(byExternal.data!.data.id).toBe(second.id);
  });

  test('include replaces the default set', async () => {
    const created = await newCustomer(app.api, { address: { postal_code: '78704' }, metadata: { a: '1' } });
    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: created.id }, query: { include: 'rules' } } });
    expect(data!.data.rules).toEqual([]);
    expect(data!.data).not.toHaveProperty('addresses');
    expect(data!.data).not.toHaveProperty('metadata');
  });

  test('an empty include embeds nothing', async () => {
    const created = await newCustomer(app.api, { address: { postal_code: '78704' } });
    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: created.id }, query: { include: '' } } });
    expect(Object.keys(data!.data).sort()).toEqual(
      ['created_at', 'date_of_birth', 'email', 'email_source', 'email_work_address', 'email_creditor_notice_date', 'external_id', 'id', 'name', 'phone', 'ssn', 'time_zone', 'communication_preferences', 'portal_account', 'updated_at'].sort(),
    );
  });

  test('an unknown include value answers 422 on query.include', async () => {
    const created = await newCustomer(app.api);
    const { response, error } = await app.api.GET('/customers/{id}', {
      params: { path: { id: created.id }, query: { include: 'addresses,friends' } },
    });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toEqual(['query.include']);
  });

  test('an unknown customer answers 404 in the error shape', async () => {
    const { response, error } = await app.api.GET('/customers/{id}', { params: { path: { id: 'no-such-customer' } } });
    expect(response.status).toBe(404);
    expect(error).toEqual({ error: expect.any(String), errorCode: 'not_found' });
  });
});

describe('PUT /customers/{id}', () => {
  test('changes only the fields given, and answers the customer as get does', async () => {
    const created = await newCustomer(app.api, { phone: '(512) 555-0147', address: { postal_code: '78704' } });
    const { data, response } = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { name: 'Maria G. Gonzalez' },
    });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ name: 'Maria G. Gonzalez', phone: '(512) 555-0147', email: created.email });
    expect(data!.data.addresses).toHaveLength(1);
  });

  test('null clears phone, date of birth and ssn', async () => {
    const created = await newCustomer(app.api, { phone: '(512) 555-0147', date_of_birth: '1984-07-19', ssn_last4: '0427' });
    const { data } = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { phone: null, date_of_birth: null, ssn_last4: null },
    });
    expect(data!.data).toMatchObject({ phone: null, date_of_birth: null, ssn: null });
  });

  test('metadata: a new value replaces, an empty value deletes a key, others are kept', async () => {
    const created = await newCustomer(app.api, { metadata: { keep: 'k', change: 'old', drop: 'd', gone: 'g' } });
    const { data } = await app.api.PUT('/customers/{id}', {
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
    const created = await newCustomer(app.api, { metadata: { a: '1', b: '2' } });
    const { data } = await app.api.PUT('/customers/{id}', { params: { path: { id: created.id } }, body: { metadata } });
    expect(data!.data.metadata).toEqual([]);
  });

  test('an address with an id updates that address; without an id adds one', async () => {
    const created = await newCustomer(app.api, { address: { postal_code: '78704', line1: 'Old' } });
    const addressId = created.address![0]!.id;
    const changed = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { address: { id: addressId, line1: 'New' } },
    });
    expect(changed.data!.data.addresses).toEqual([expect.objectContaining({ id: addressId, line1: 'New', postal_code: '78704' })]);
    const added = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { address: { postal_code: '10001', is_primary: true } },
    });
    const addresses = added.data!.data.addresses!;
    expect(addresses).toHaveLength(2);
    expect(addresses.filter((address) => address.is_primary).map((address) => address.postal_code)).toEqual(['10001']);
  });

  test('a new address without postal_code answers 422 on address.postal_code and changes nothing', async () => {
    const created = await newCustomer(app.api, { name: 'Before' });
    const { response, error } = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { name: 'After', address: { city: 'Austin' } } as never,
    });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toContain('address.postal_code');
    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: created.id } } });
    expect(data!.data.name).toBe('Before');
  });

  test("an address id of another customer answers 422 on address.id and changes nothing", async () => {
    const other = await newCustomer(app.api, { address: { postal_code: '78704' } });
    const created = await newCustomer(app.api, { name: 'Before' });
    const { response, error } = await app.api.PUT('/customers/{id}', {
      params: { path: { id: created.id } },
      body: { name: 'After', address: { id: other.address![0]!.id, line1: 'Hijack' } },
    });
    expect(response.status).toBe(422);
    expect(Object.keys((error as { errors: object }).errors)).toEqual(['address.id']);
    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: other.id } } });
    expect(data!.data.addresses![0]!.line1).toBeNull();
  });

  test('taking another customer’s external_id answers 422; keeping one’s own is fine', async () => {
    const taken = unique('CUST');
    await newCustomer(app.api, { external_id: taken });
    const own = unique('CUST');
    const created = await newCustomer(app.api, { external_id: own });
    const clash = await app.api.PUT('/customers/{id}', { params: { path: { id: created.id } }, body: { external_id: taken } });
    expect(clash.response.status).toBe(422);
    const same = await app.api.PUT('/customers/{id}', { params: { path: { id: created.id } }, body: { external_id: own } });
    expect(same.response.status).toBe(200);
  });
});

describe('DELETE /customers/{id}', () => {
  test('deletes the customer with its addresses; a second delete answers 404', async () => {
    const created = await newCustomer(app.api, { address: { postal_code: '78704' } });
    const { data, response } = await app.api.DELETE('/customers/{id}', { params: { path: { id: created.id } } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ success: true });
    const again = await app.api.DELETE('/customers/{id}', { params: { path: { id: created.id } } });
    expect(again.response.status).toBe(404);
    const rows = await app.db('customer_addresses').where({ customer_id: created.id });
    expect(rows).toEqual([]);
  });
});
