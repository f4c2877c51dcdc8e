import type { Schemas } from '../../client';
import { accountWithCard, expectFieldError, newCustomer, newDebtAccount, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Create = Schemas['DebtAccountCreate'];

async function customerId(): Promise<string> {
  return (await newCustomer(app.api, { external_id: unique('CUST') })).id;
}

/** A location every account of this file may reuse. */
const LOCATION = { location_id: 'LOC-LAKESIDE-01', location_name: 'Lakeside Medical Center' };

/** An account at LOCATION (newDebtAccount's default), with a fresh external_id. */
async function account(customer: string, body: Partial<Create> = {}) {
  return newDebtAccount(app.api, customer, { external_id: unique('ACC'), balance: 10_000, ...body });
}

async function read(id: string) {
  const { data, response } = await app.api.GET('/debt-accounts/{id}', { params: { path: { id } } });
  expect(response.status).toBe(200);
  return data!.data;
}

async function put(id: string, body: Schemas['DebtAccountUpdate']) {
  return app.api.PUT('/debt-accounts/{id}', { params: { path: { id } }, body });
}

describe('POST /debt-accounts', () => {
  test('creates an account with every field, and answers it with the default relations', async () => {
    const customer = await customerId();
    const externalId = unique('ACC');
    const { data, response } = await app.api.POST('/debt-accounts', {
      body: {
        customer_id: customer,
        location_id: unique('LOC'),
        location_name: 'Northstar Dental Group',
        location_type: 'current_creditor',
        locations: [{ name: 'Summit Recovery Partners', external_id: unique('LOC'), type: 'product_type' }],
        external_id: externalId,
        billing_type: ['payment-plan', 'partial-payment'],
        external_account_number: '4417-0093-2210',
        payment_plan: { frequency: 'monthly', start_date: '2099-12-01', amount: 15000 },
        balance: 184250,
        current_balance: 159250,
        metadata: { portfolio: 'spring-2026' },
        status: 'closed',
        external_status: 'placed',
        rules: { min_payment_amount: 2500 },
      },
    });
    expect(response.status).toBe(201);
    const created = data!.data;
    expect(created).toMatchObject({
      external_id: externalId,
      parent_external_id: null,
      billing_type: ['partial-payment', 'payment-plan'],
      balance: 184250,
      current_balance: 159250,
      external_account_number: '4417-0093-2210',
      status: 'closed',
      external_status: 'placed',
      rules: { min_payment_amount: 2500 },
      metadata: [{ attribute: 'portfolio', value: 'spring-2026' }],
      transactions: [],
      charges: [],
      customer: { id: customer },
      location: { name: 'Northstar Dental Group', type: 'current_creditor', debt_accounts_count: 1 },
      payment_plan: { frequency: 'monthly', start_date: '2099-12-01', amount: 15000, status: 'pending_enrollment' },
    });
    expect(created.external_company_id).toBe(created.location!.external_id);
    expect(created.locations).toEqual([expect.objectContaining({ name: 'Summit Recovery Partners', type: 'product_type' })]);
  });

  test('defaults: current_balance is balance, status active, every billing type, no plan, no rules', async () => {
    const created = await account(await customerId(), { balance: 5000 });
    expect(created).toMatchObject({
      current_balance: 5000,
      status: 'active',
      billing_type: ['partial-payment', 'full-amount-payment', 'payment-plan'],
      payment_plan: null,
      rules: {},
    });
  });

  test('a new location is created once and then reused by its external_id; its type defaults to original_creditor', async () => {
    const customer = await customerId();
    const locationId = unique('LOC');
    const first = await account(customer, { location_id: locationId, location_name: 'Harbor Credit Union' });
    const second = await account(customer, { location_id: locationId, location_name: 'Ignored Name' });
    expect(first.location!.id).toBe(second.location!.id);
    expect(second.location).toMatchObject({ name: 'Harbor Credit Union', type: 'original_creditor', debt_accounts_count: 2 });
    const byUuid = await account(customer, { location_id: first.location!.id, location_name: undefined });
    expect(byUuid.location!.id).toBe(first.location!.id);
  });

  test('an unknown location without location_name answers 422 on location_name and creates nothing', async () => {
    const customer = await customerId();
    const externalId = unique('ACC');
    const { response, error } = await app.api.POST('/debt-accounts', {
      body: { customer_id: customer, location_id: unique('LOC'), external_id: externalId, balance: 100 },
    });
    expect(response.status).toBe(422);
    expectFieldError(error, 'location_name');
    expect((await app.api.GET('/debt-accounts/{id}', { params: { path: { id: externalId } } })).response.status).toBe(404);
  });

  test('an unknown customer answers 422 on customer_id, and no location is left behind', async () => {
    const locationId = unique('LOC');
    const { response, error } = await app.api.POST('/debt-accounts', {
      body: { customer_id: 'NO-SUCH-CUSTOMER', location_id: locationId, location_name: 'Orphan', balance: 100 },
    });
    expect(response.status).toBe(422);
    expectFieldError(error, 'customer_id');
    expect(await app.db('locations').where({ external_id: locationId })).toEqual([]);
  });

  test.each([
    ['a negative balance', { balance: -1 }, 'balance'],
    ['a fractional balance', { balance: 10.5 }, 'balance'],
    ['a balance over the maximum', { balance: 100_000_000_001 }, 'balance'],
    ['a negative current_balance', { current_balance: -1 }, 'current_balance'],
    ['min_payment_amount 99', { rules: { min_payment_amount: 99 } }, 'rules.min_payment_amount'],
    ['an unknown rule', { rules: { max_payment_amount: 500 } }, 'rules.max_payment_amount'],
    ['an unknown billing type', { billing_type: ['installments'] }, 'billing_type[0]'],
    ['a repeated billing type', { billing_type: ['partial-payment', 'partial-payment'] }, 'billing_type'],
    ['an empty billing type list', { billing_type: [] }, 'billing_type'],
    ['an unknown status', { status: 'open' }, 'status'],
    ['an unknown location type', { location_type: 'debt_buyer' }, 'location_type'],
    ['a metadata value of 256 characters', { metadata: { k: 'v'.repeat(256) } }, 'metadata.k'],
    ['a plan frequency without start date', { payment_plan: { frequency: 'weekly' } }, 'payment_plan.start_date'],
    ['an unknown plan frequency', { payment_plan: { frequency: 'daily', start_date: '2099-01-01' } }, 'payment_plan.frequency'],
    ['a plan starting yesterday', { payment_plan: { start_date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10) } }, 'payment_plan.start_date'],
    ['a plan without payment-plan billing', { billing_type: ['partial-payment'], payment_plan: {} }, 'payment_plan'],
    ['an unknown field', { nickname: 'x' }, 'nickname'],
  ])('%s answers 422 naming the field and creates nothing', async (_label, body, field) => {
    const customer = await customerId();
    const externalId = unique('ACC');
    const { response, error } = await app.api.POST('/debt-accounts', {
      body: { customer_id: customer, ...LOCATION, external_id: externalId, balance: 1000, ...body } as never,
    });
    expect(response.status).toBe(422);
    expectFieldError(error, field);
    expect((await app.api.GET('/debt-accounts/{id}', { params: { path: { id: externalId } } })).response.status).toBe(404);
  });

  test('accepts the edges: balance 0 and 100000000000, min_payment_amount 100, metadata of 255 characters', async () => {
    const customer = await customerId();
    expect((await account(customer, { balance: 0 })).balance).toBe(0);
    expect((await account(customer, { balance: 100_000_000_000 })).balance).toBe(100_000_000_000);
    expect((await account(customer, { rules: { min_payment_amount: 100 } })).rules).toEqual({ min_payment_amount: 100 });
    const key = 'k'.repeat(255);
    expect((await account(customer, { metadata: { [key]: 'v'.repeat(255) } })).metadata).toEqual([{ attribute: key, value: 'v'.repeat(255) }]);
  });

  test('a plan with open terms waits for the customer; null means no plan', async () => {
    const customer = await customerId();
    expect((await account(customer, { payment_plan: {} })).payment_plan).toMatchObject({ frequency: null, status: 'pending_configuration' });
    expect((await account(customer, { payment_plan: { frequency: null, amount: 5000 } })).payment_plan).toMatchObject({ amount: 5000, status: 'pending_configuration' });
    expect((await account(customer, { payment_plan: null })).payment_plan).toBeNull();
  });

  test('a taken external_id answers 422 "has already been taken"; racing creates: one wins', async () => {
    const customer = await customerId();
    const taken = (await account(customer)).external_id!;
    const { response, error } = await app.api.POST('/debt-accounts', { body: { customer_id: customer, ...LOCATION, external_id: taken, balance: 1 } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ errors: { external_id: ['has already been taken'] } });
    const racing = unique('ACC');
    const results = await Promise.all(
      Array.from({ length: 5 }, () => app.api.POST('/debt-accounts', { body: { customer_id: customer, ...LOCATION, external_id: racing, balance: 1 } })),
    );
    expect(results.map((r) => r.response.status).sort()).toEqual([201, 422, 422, 422, 422]);
  });
});

describe('nesting and roll-up', () => {
  test('a parent’s amounts become the sums of its children, from the first child on', async () => {
    const customer = await customerId();
    const parent = await account(customer, { balance: 999, current_balance: 999 });
    expect((await read(parent.id)).balance).toBe(999);
    await account(customer, { parent_external_id: parent.external_id, balance: 300, current_balance: 200 });
    await account(customer, { parent_external_id: parent.external_id, balance: 50 });
    expect(await read(parent.id)).toMatchObject({ balance: 350, current_balance: 250 });
  });

  test.each([
    ['an unknown parent', async () => 'NO-SUCH-ACCOUNT'],
    ['another customer’s account', async () => (await account(await customerId())).external_id!],
    ['a child account (one level only)', async (customer: string) => {
      const top = await account(customer);
      return (await account(customer, { parent_external_id: top.external_id })).external_id!;
    }],
  ])('naming %s as parent answers 422 on parent_external_id', async (_label, parentOf) => {
    const customer = await customerId();
    const parent = await parentOf(customer);
    const { response, error } = await app.api.POST('/debt-accounts', {
      body: { customer_id: customer, ...LOCATION, parent_external_id: parent, balance: 10 },
    });
    expect(response.status).toBe(422);
    expectFieldError(error, 'parent_external_id');
  });

  test('a child’s amount change, a move between parents and a detach recalculate every parent involved', async () => {
    const customer = await customerId();
    const a = await account(customer);
    const b = await account(customer);
    const child = await account(customer, { parent_external_id: a.external_id, balance: 400, current_balance: 300 });
    await account(customer, { parent_external_id: a.external_id, balance: 100 });
    expect(await read(a.id)).toMatchObject({ balance: 500, current_balance: 400 });

    expect((await put(child.id, { balance: 1000, current_balance: 900 })).response.status).toBe(200);
    expect(await read(a.id)).toMatchObject({ balance: 1100, current_balance: 1000 });

    expect((await put(child.id, { balance: 1000, parent_external_id: b.external_id })).response.status).toBe(200);
    expect(await read(a.id)).toMatchObject({ balance: 100, current_balance: 100 });
    expect(await read(b.id)).toMatchObject({ balance: 1000, current_balance: 900 });
    expect((await read(child.id)).parent_external_id).toBe(b.external_id);

    expect((await put(child.id, { balance: 1000, parent_external_id: null })).response.status).toBe(200);
    expect(await read(b.id)).toMatchObject({ balance: 0, current_balance: 0 });
  });

  test('a parent’s own amounts can only be restated as the sums while it has children', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    await account(customer, { parent_external_id: parent.external_id, balance: 700, current_balance: 600 });
    const wrong = await put(parent.id, { balance: 1, status: 'archived' });
    expect(wrong.response.status).toBe(422);
    expectFieldError(wrong.error, 'balance');
    expect((await read(parent.id)).status).toBe('active');
    const right = await put(parent.id, { balance: 700, current_balance: 600, status: 'archived' });
    expect(right.response.status).toBe(200);
    expect(right.data!.data).toMatchObject({ balance: 700, current_balance: 600, status: 'archived' });
  });

  test('an account with children cannot become a child', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    const other = await account(customer);
    await account(customer, { parent_external_id: parent.external_id, balance: 5 });
    const { response, error } = await put(parent.id, { balance: 5, parent_external_id: other.external_id });
    expect(response.status).toBe(422);
    expectFieldError(error, 'parent_external_id');
  });

  test('twenty parallel updates of sibling children never lose an update', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    const children = [];
    for (let i = 0; i < 20; i++) children.push(await account(customer, { parent_external_id: parent.external_id, balance: 1 }));
    const results = await Promise.all(
      children.map((child, i) => put(child.id, { balance: 100 + i, current_balance: 50 + i })),
    );
    expect(results.every((result) => result.response.status === 200)).toBe(true);
    const sum = (base: number) => Array.from({ length: 20 }, (_, i) => base + i).reduce((a, b) => a + b, 0);
    expect(await read(parent.id)).toMatchObject({ balance: sum(100), current_balance: sum(50) });
  });

  test('parallel creates and deletes of children leave the parent at the sum of what remains', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    const doomed = [];
    for (let i = 0; i < 5; i++) doomed.push(await account(customer, { parent_external_id: parent.external_id, balance: 1000 }));
    await Promise.all([
      ...doomed.map((child) => app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: child.id } } })),
      ...Array.from({ length: 5 }, () => account(customer, { parent_external_id: parent.external_id, balance: 7 })),
    ]);
    expect(await read(parent.id)).toMatchObject({ balance: 35, current_balance: 35 });
  });
});

describe('PUT /debt-accounts/{id}', () => {
  test('balance is required; other fields are left unchanged when omitted', async () => {
    const created = await account(await customerId(), { external_status: 'placed', metadata: { a: '1' } });
    const missing = await put(created.id, { status: 'closed' } as never);
    expect(missing.response.status).toBe(422);
    expectFieldError(missing.error, 'balance');
    const { data } = await put(created.id, { balance: 20_000 });
    expect(data!.data).toMatchObject({ balance: 20_000, current_balance: 10_000, external_status: 'placed', metadata: [{ attribute: 'a', value: '1' }] });
  });

  test('metadata and rules follow the update semantics', async () => {
    const created = await account(await customerId(), { metadata: { keep: 'k', change: 'old', drop: 'd' }, rules: { min_payment_amount: 500 } });
    const { data } = await put(created.id, { balance: 10_000, metadata: { change: 'new', drop: '' }, rules: { min_payment_amount: null } });
    expect(data!.data.metadata).toEqual([
      { attribute: 'change', value: 'new' },
      { attribute: 'keep', value: 'k' },
    ]);
    expect(data!.data.rules).toEqual({});
    const again = await put(created.id, { balance: 10_000, metadata: {}, rules: { min_payment_amount: 100 } });
    expect(again.data!.data).toMatchObject({ metadata: [], rules: { min_payment_amount: 100 } });
    const cleared = await put(created.id, { balance: 10_000, rules: null });
    expect(cleared.data!.data.rules).toEqual({});
  });

  test('locations replaces the additional locations; payment_plan is refused', async () => {
    const created = await account(await customerId(), { locations: [{ name: 'One', external_id: unique('LOC') }] });
    const { data } = await put(created.id, { balance: 10_000, locations: [{ name: 'Two', external_id: unique('LOC') }] });
    expect(data!.data.locations!.map((l) => l.name)).toEqual(['Two']);
    const emptied = await put(created.id, { balance: 10_000, locations: [] });
    expect(emptied.data!.data.locations).toEqual([]);
    const plan = await put(created.id, { balance: 10_000, payment_plan: {} } as never);
    expect(plan.response.status).toBe(422);
    expectFieldError(plan.error, 'payment_plan');
  });

  test('external_id can change, and children then show the new value', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    const child = await account(customer, { parent_external_id: parent.external_id, balance: 3 });
    const renamed = unique('ACC');
    expect((await put(parent.id, { balance: 3, external_id: renamed })).response.status).toBe(200);
    expect((await read(child.id)).parent_external_id).toBe(renamed);
  });
});

describe('GET and DELETE /debt-accounts', () => {
  test('include chooses the relations; an empty include embeds none; an unknown one is 422', async () => {
    const created = await account(await customerId(), { metadata: { a: '1' } });
    const some = await app.api.GET('/debt-accounts/{id}', { params: { path: { id: created.id }, query: { include: 'customer' } } });
    expect(some.data!.data.customer).toBeDefined();
    expect(some.data!.data).not.toHaveProperty('location');
    expect(some.data!.data).not.toHaveProperty('metadata');
    const none = await app.api.GET('/debt-accounts/{id}', { params: { path: { id: created.id }, query: { include: '' } } });
    for (const relation of ['customer', 'location', 'locations', 'metadata']) expect(none.data!.data).not.toHaveProperty(relation);
    const bad = await app.api.GET('/debt-accounts/{id}', { params: { path: { id: created.id }, query: { include: 'charges' } } });
    expect(bad.response.status).toBe(422);
    expectFieldError(bad.error, 'query.include');
  });

  test('lists the tenant’s accounts, oldest first, paged', async () => {
    const before = (await app.sandbox.GET('/debt-accounts')).data!.meta.total;
    const customer = (await newCustomer(app.sandbox)).id;
    for (let i = 0; i < 3; i++) {
      await app.sandbox.POST('/debt-accounts', { body: { customer_id: customer, ...LOCATION, external_id: `SBX-${i}`, balance: i } });
    }
    const { data } = await app.sandbox.GET('/debt-accounts', { params: { query: { limit: 2, page: Math.floor(before / 2) + 1 } } });
    expect(data!.meta.total).toBe(before + 3);
    const all = await app.sandbox.GET('/debt-accounts', { params: { query: { limit: 500 } } });
    expect(all.data!.data.slice(-3).map((a) => a.external_id)).toEqual(['SBX-0', 'SBX-1', 'SBX-2']);
  });

  test('deleting a parent with children answers 409; deleting the child recalculates the parent', async () => {
    const customer = await customerId();
    const parent = await account(customer);
    const child = await account(customer, { parent_external_id: parent.external_id, balance: 40 });
    await account(customer, { parent_external_id: parent.external_id, balance: 2 });
    const refused = await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: parent.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ errorCode: 'conflict' });
    const removed = await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: child.external_id! } } });
    expect(removed.data).toEqual({ success: true });
    expect((await read(parent.id)).balance).toBe(2);
    expect((await app.api.GET('/debt-accounts/{id}', { params: { path: { id: child.id } } })).response.status).toBe(404);
  });

  test('an account with a charge on record cannot be deleted (409, 12 CFR 1006.100): it and its charge stay', async () => {
    const { account: paid, methodId } = await accountWithCard(app.sandbox, 5000);
    const charged = await app.sandbox.POST('/charges', { body: { amount: 1200, debt_account_id: paid.id, payment_method_id: methodId } });
    expect(charged.response.status).toBe(201);
    const refused = await app.sandbox.DELETE('/debt-accounts/{id}', { params: { path: { id: paid.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ errorCode: 'conflict', error: expect.stringMatching(/set its status to closed/) });
    expect((await app.sandbox.GET('/debt-accounts/{id}', { params: { path: { id: paid.id } } })).data!.data.current_balance).toBe(3800);
    expect((await app.sandbox.GET('/charges/{id}', { params: { path: { id: charged.data!.data.id } } })).data!.data.status).toBe('succeeded');
    const closed = await app.sandbox.PUT('/debt-accounts/{id}', { params: { path: { id: paid.id } }, body: { balance: 5000, status: 'closed' } });
    expect(closed.data!.data.status).toBe('closed');
  });

  test('a customer with accounts cannot be deleted (409); its accounts read back on the customer', async () => {
    const customer = await customerId();
    const created = await account(customer);
    const refused = await app.api.DELETE('/customers/{id}', { params: { path: { id: customer } } });
    expect(refused.response.status).toBe(409);
    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: customer }, query: { include: 'debt_accounts,debt_accounts.location' } } });
    expect(data!.data.debt_accounts).toEqual([expect.objectContaining({ id: created.id, location: expect.objectContaining({ external_id: LOCATION.location_id }) })]);
    expect(data!.data.debt_accounts![0]).not.toHaveProperty('customer');
    expect(data!.data.debt_accounts![0]).not.toHaveProperty('metadata');
  });
});

describe('tenancy', () => {
  test('another organization and the other environment get 404 by id and external_id, and cannot attach to it', async () => {
    const customer = await customerId();
    const created = await account(customer);
    for (const outsider of [app.other, app.sandbox]) {
      for (const key of [created.id, created.external_id!]) {
        expect((await outsider.GET('/debt-accounts/{id}', { params: { path: { id: key } } })).response.status).toBe(404);
        expect((await outsider.PUT('/debt-accounts/{id}', { params: { path: { id: key } }, body: { balance: 1 } })).response.status).toBe(404);
        expect((await outsider.DELETE('/debt-accounts/{id}', { params: { path: { id: key } } })).response.status).toBe(404);
      }
      const list = await outsider.GET('/debt-accounts', { params: { query: { limit: 500 } } });
      expect(list.data!.data.map((a) => a.id)).not.toContain(created.id);
      const attach = await outsider.POST('/debt-accounts', { body: { customer_id: customer, ...LOCATION, balance: 1 } });
      expect(attach.response.status).toBe(422);
      expectFieldError(attach.error, 'customer_id');
    }
    expect((await read(created.id)).balance).toBe(10_000);
  });

  test('the same external_id and location external_id may exist in another organization', async () => {
    const mine = await account(await customerId(), { external_id: 'SHARED-ACC' });
    const theirs = await app.other.POST('/debt-accounts', {
      body: { customer_id: (await newCustomer(app.other)).id, ...LOCATION, external_id: 'SHARED-ACC', balance: 1 },
    });
    expect(theirs.response.status).toBe(201);
    expect(theirs.data!.data.location!.id).not.toBe(mine.location!.id);
  });
});

describe('debt_accounts_count of a location', () => {
  test('an account whose own location was one of its additional ones counts once', async () => {
    const customer = await customerId();
    const second = unique('LOC');
    const created = await account(customer, { locations: [{ name: 'Summit Recovery Partners', external_id: second }] });
    const { data } = await put(created.id, { balance: 10_000, location_id: second });
    expect(data!.data.location).toMatchObject({ external_id: second, debt_accounts_count: 1 });
    expect(data!.data.locations).toEqual([]);
  });
});
