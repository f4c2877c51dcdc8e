import type { ApiClient, Schemas } from '../../client';
import { runBulkImport, type BulkJob } from '../../server/bulk/bulk-import';
import { loadConfig } from '../../server/kernel/config';
import { copyRows } from '../../server/db/copy-rows';
import { createOrganization } from '../../server/organizations/organization-repo';
import { expectFieldError, newCustomer } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  await app.startWorkers();
});
afterAll(async () => app?.stop());

type Item = Schemas['BulkItem'];

/** A fresh organization, so that counts in it are exact. */
async function freshTenant(): Promise<{ client: ApiClient; organizationId: string }> {
  const organization = await createOrganization(app.db, 'Bulk Test Agency', 'ops@bulk-test.example');
  return { client: app.clientFor(organization.production_token), organizationId: organization.organization_id };
}

/** A row with an address, a location, one parent and two children, as agencies send them. */
function row(i: number, prefix = 'R'): Item {
  return {
    customer: {
      name: `Customer ${i}`,
      email: `customer${i}@mail.debt-collection.example`,
      external_id: `${prefix}-CUST-${i}`,
      phone: '(512) 555-0147',
      address: { line1: `${i} Oak Hollow Dr`, city: 'Austin', state: 'TX', postal_code: '78704' },
      metadata: { batch: prefix },
    },
    location: { name: 'Lakeside Medical Center', external_id: `${prefix}-LOC` },
    parent_debt_accounts: [{ external_id: `${prefix}-P-${i}`, balance: 0 }],
    debt_accounts: [
      { external_id: `${prefix}-A-${i}`, parent_external_id: `${prefix}-P-${i}`, balance: 10_000, current_balance: 7_500 },
      { external_id: `${prefix}-B-${i}`, parent_external_id: `${prefix}-P-${i}`, balance: 2_500 },
    ],
  };
}

async function completed(client: ApiClient, id: string): Promise<Schemas['BulkActionProgress']> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const { data } = await client.GET('/bulk/{id}', { params: { path: { id } } });
    if (data!.data.status === 'completed') return data!.data;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`bulk ${id} did not complete`);
}

async function submit(client: ApiClient, items: Item[]): Promise<string> {
  const { data, response, error } = await client.POST('/bulk', { body: items });
  if (response.status !== 201) throw new Error(`bulk refused: ${response.status} ${JSON.stringify(error)}`);
  expect(data!.data).toEqual({ bulk_id: expect.any(String), count: items.length, status: 'pending' });
  return data!.data.bulk_id;
}

async function errorsOf(client: ApiClient, id: string) {
  const { data } = await client.GET('/bulk/{id}/errors', { params: { path: { id }, query: { limit: 500 } } });
  return data!;
}


/** Whether a statement of this database waits on a lock within about 6 s (asked every 20 ms). */
async function someoneWaitsOnALock(): Promise<boolean> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const { rows } = await app.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (rows[0].n > 0) return true;
    await new Promise((done) => setTimeout(done, 20));
  }
  return false;
}

describe('POST /bulk', () => {
  test('1000 rows, each a customer with an address, a parent and two children, are all created, with parents rolled up', async () => {
    const { client } = await freshTenant();
    const id = await submit(client, Array.from({ length: 1000 }, (_, i) => row(i, 'K')));
    expect(await completed(client, id)).toMatchObject({ count: 1000, processed: 1000, failed: 0, completed_at: expect.any(String) });
    expect((await client.GET('/customers', { params: { query: { limit: 1 } } })).data!.meta.total).toBe(1000);
    expect((await client.GET('/debt-accounts', { params: { query: { limit: 1 } } })).data!.meta.total).toBe(3000);
    const parent = await client.GET('/debt-accounts/{id}', { params: { path: { id: 'K-P-999' } } });
    expect(parent.data!.data).toMatchObject({ balance: 12_500, current_balance: 10_000, location: { external_id: 'K-LOC', debt_accounts_count: 3000 } });
    const customer = await client.GET('/customers/{id}', { params: { path: { id: 'K-CUST-999' } } });
    expect(customer.data!.data.addresses).toEqual([expect.objectContaining({ postal_code: '78704', is_primary: true })]);
    expect((await errorsOf(client, id)).data).toEqual([]);
  });

  test.each([
    ['1001 rows', 1001, 'body'],
    ['no row', 0, 'body'],
  ])('%s answers 422 and queues nothing', async (_label, count, field) => {
    const { client, organizationId } = await freshTenant();
    const { response, error } = await client.POST('/bulk', { body: Array.from({ length: count }, (_, i) => row(i, 'X')) });
    expect(response.status).toBe(422);
    expectFieldError(error, field);
    expect(await app.db('bulk_actions').where({ organization_id: organizationId })).toEqual([]);
  });

  test.each([
    ['a row with accounts but no location', (item: Item) => ({ ...item, location: undefined }), '[1].location'],
    ['a date of birth in the future', (item: Item) => ({ ...item, customer: { ...item.customer, date_of_birth: '2999-01-01' } }), '[1].customer.date_of_birth'],
    ['a 4-digit postal code', (item: Item) => ({ ...item, customer: { ...item.customer, address: { postal_code: '7870' } } }), '[1].customer.address.postal_code'],
    ['a negative child balance', (item: Item) => ({ ...item, debt_accounts: [{ balance: -1 }] }), '[1].debt_accounts[0].balance'],
    ['a parent without external_id', (item: Item) => ({ ...item, parent_debt_accounts: [{ balance: 1 }] }) as never, '[1].parent_debt_accounts[0].external_id'],
  ])('%s in the second row answers 422 naming it, for the whole request', async (_label, spoil, field) => {
    const { client, organizationId } = await freshTenant();
    const { response, error } = await client.POST('/bulk', { body: [row(0, 'S'), spoil(row(1, 'S'))] });
    expect(response.status).toBe(422);
    expectFieldError(error, field);
    expect(await app.db('bulk_actions').where({ organization_id: organizationId })).toEqual([]);
  });

  test('bad rows are recorded with their reasons, and never spoil the good ones', async () => {
    const { client } = await freshTenant();
    await newCustomer(client, { external_id: 'M-CUST-EXISTING' });
    const taken = await client.POST('/debt-accounts', {
      body: { customer_id: 'M-CUST-EXISTING', location_id: 'M-LOC', location_name: 'Harbor', external_id: 'M-ACC-EXISTING', balance: 1 },
    });
    expect(taken.response.status).toBe(201);
    const duplicateInRequest = row(3, 'M');
    duplicateInRequest.customer.external_id = 'M-CUST-0';
    const items: Item[] = [
      row(0, 'M'),
      { ...row(1, 'M'), customer: { ...row(1, 'M').customer, external_id: 'M-CUST-EXISTING' } },
      { ...row(2, 'M'), debt_accounts: [{ external_id: 'M-ACC-EXISTING', balance: 5 }, { parent_external_id: 'M-NO-SUCH', balance: 5 }] },
      duplicateInRequest,
      { ...row(4, 'M'), debt_accounts: [{ external_id: 'M-TWICE', balance: 1 }, { external_id: 'M-TWICE', balance: 2 }] },
      row(5, 'M'),
    ];
    const id = await submit(client, items);
    expect(await completed(client, id)).toMatchObject({ count: 6, processed: 6, failed: 4 });
    const { data, meta } = await errorsOf(client, id);
    expect(meta.total).toBe(4);
    expect(data.map((record) => record.id)).toEqual([1, 2, 3, 4]);
    expect(data[0]).toEqual({
      id: 1,
      payload: items[1],
      errors: { customer: [{ data: items[1]!.customer, messages: { external_id: ['has already been taken'] } }], location: [], debt_accounts: [], parent_debt_accounts: [] },
    });
    expect(data[1]!.errors.debt_accounts).toEqual([
      { data: { external_id: 'M-ACC-EXISTING', balance: 5 }, messages: { external_id: ['has already been taken'] } },
      { data: { parent_external_id: 'M-NO-SUCH', balance: 5 }, messages: { parent_external_id: ['does not match a parent debt account of this row'] } },
    ]);
    expect(data[2]!.errors.customer[0]!.messages).toEqual({ external_id: ['has already been taken'] });
    expect(data[3]!.errors.debt_accounts[0]!.messages).toEqual({ external_id: ['has already been taken'] });
    // The good rows exist; the failed rows created nothing, not even their parents.
    for (const key of ['M-CUST-0', 'M-CUST-5']) expect((await client.GET('/customers/{id}', { params: { path: { id: key } } })).response.status).toBe(200);
    for (const key of ['M-P-2', 'M-P-3', 'M-P-4', 'M-CUST-4']) {
      const kind = key.includes('CUST') ? '/customers/{id}' : '/debt-accounts/{id}';
      expect((await client.GET(kind as '/customers/{id}', { params: { path: { id: key } } })).response.status).toBe(404);
    }
  });

  test('an implicit parent (an external_id and a null parent_external_id) takes the sums of the entries that name it', async () => {
    const { client } = await freshTenant();
    const id = await submit(client, [
      {
        customer: { name: 'Dana Whitfield', email: 'dana@mail.debt-collection.example', external_id: 'I-CUST' },
        location: { name: 'Northstar Dental Group' },
        debt_accounts: [
          { external_id: 'I-PARENT', parent_external_id: null, balance: 999 },
          { external_id: 'I-CHILD-1', parent_external_id: 'I-PARENT', balance: 300, current_balance: 100 },
          { parent_external_id: 'I-PARENT', balance: 200 },
          { external_id: 'I-ALONE', balance: 50 },
        ],
      },
    ]);
    await completed(client, id);
    const parent = (await client.GET('/debt-accounts/{id}', { params: { path: { id: 'I-PARENT' } } })).data!.data;
    expect(parent).toMatchObject({ balance: 500, current_balance: 300, parent_external_id: null, location: { name: 'Northstar Dental Group', type: 'original_creditor' } });
    expect((await client.GET('/debt-accounts/{id}', { params: { path: { id: 'I-CHILD-1' } } })).data!.data.parent_external_id).toBe('I-PARENT');
    expect((await client.GET('/debt-accounts/{id}', { params: { path: { id: 'I-ALONE' } } })).data!.data).toMatchObject({ balance: 50, parent_external_id: null });
  });

  test('a location named by an existing external_id is reused as it is', async () => {
    const { client } = await freshTenant();
    const existing = await client.POST('/locations', { body: { name: 'Harbor Credit Union', external_id: 'L-HARBOR', type: 'current_creditor' } });
    const id = await submit(client, [{ ...row(0, 'L'), location: { name: 'Renamed?', external_id: 'L-HARBOR' } }]);
    await completed(client, id);
    const account = (await client.GET('/debt-accounts/{id}', { params: { path: { id: 'L-A-0' } } })).data!.data;
    expect(account.location).toMatchObject({ id: existing.data!.data.id, name: 'Harbor Credit Union', type: 'current_creditor' });
  });

  test('the completion e-mail goes to the organization’s address', async () => {
    const { client } = await freshTenant();
    const id = await submit(client, [row(0, 'E')]);
    await completed(client, id);
    for (let attempt = 0; attempt < 100 && !app.logs.some((line) => line.includes(id) && line.includes('e-mail')); attempt++) {
      await new Promise((done) => setTimeout(done, 100));
    }
    const mail = app.logs.map((line) => JSON.parse(line)).find((line) => line.mail?.subject?.includes(id));
    expect(mail.mail).toMatchObject({ to: [{ address: 'ops@bulk-test.example' }], text: expect.stringContaining('1 rows, 1 created, 0 failed') });
  });

  test('every value is stored as sent: tabs, newlines, backslashes, quotes and other scripts in text and metadata', async () => {
    const { client } = await freshTenant();
    const odd = 'Tab\there, line\nbreak, carriage\rreturn, back\\slash \\N, "quotes", {braces}, Zoë 東京 🙂';
    const metadata = { note: odd, path: 'C:\\dir\\file', 'a "key"\\': '\\u0041 is not A' };
    // Metadata is answered as a list of attribute and value.
    const shown = expect.arrayContaining(Object.entries(metadata).map(([attribute, value]) => ({ attribute, value })));
    const id = await submit(client, [
      {
        customer: { name: odd, email: 'odd@mail.debt-collection.example', external_id: 'V-CUST\\1', metadata, address: { postal_code: '78704' } },
        location: { name: `Location ${odd}`, external_id: 'V-LOC\t1' },
        debt_accounts: [
          { external_id: 'V-ACC\\"1"', external_account_number: odd, billing_type: ['full-amount-payment', 'partial-payment'], balance: 100, metadata },
        ],
      },
      // The first row's address has a postal code only; this one's other fields are kept all the same.
      { customer: { name: 'Second', email: 'second@mail.debt-collection.example', external_id: 'V-CUST-2', address: { line1: odd, city: 'Austin', country: 'US', postal_code: '78701' } } },
    ]);
    expect(await completed(client, id)).toMatchObject({ processed: 2, failed: 0 });
    const customer = (await client.GET('/customers/{id}', { params: { path: { id: 'V-CUST\\1' } } })).data!.data;
    expect(customer).toMatchObject({ name: odd, metadata: shown });
    expect(customer.metadata).toHaveLength(3);
    expect(customer.addresses).toEqual([expect.objectContaining({ line1: null, postal_code: '78704', is_primary: true })]);
    const account = (await client.GET('/debt-accounts/{id}', { params: { path: { id: 'V-ACC\\"1"' } } })).data!.data;
    expect(account).toMatchObject({ external_account_number: odd, billing_type: ['partial-payment', 'full-amount-payment'], metadata: shown, location: { name: `Location ${odd}`, external_id: 'V-LOC\t1' } });
    const second = (await client.GET('/customers/{id}', { params: { path: { id: 'V-CUST-2' } } })).data!.data;
    expect(second.addresses).toEqual([expect.objectContaining({ line1: odd, line2: null, city: 'Austin', country: 'US', postal_code: '78701' })]);
  });

  test('BULK_CHUNK_ROWS sets the rows written per transaction, 1 to 1000; 1000 when unset', () => {
    expect(loadConfig({}).bulkChunkRows).toBe(1000);
    expect(loadConfig({ BULK_CHUNK_ROWS: '100' }).bulkChunkRows).toBe(100);
    for (const bad of ['0', '1001', 'many']) expect(() => loadConfig({ BULK_CHUNK_ROWS: bad })).toThrow(/BULK_CHUNK_ROWS must be a whole number from 1 to 1000/);
  });

  test('another organization or environment cannot read a bulk action', async () => {
    const { client } = await freshTenant();
    const id = await submit(client, [row(0, 'T')]);
    for (const outsider of [app.api, app.sandbox]) {
      expect((await outsider.GET('/bulk/{id}', { params: { path: { id } } })).response.status).toBe(404);
      expect((await outsider.GET('/bulk/{id}/errors', { params: { path: { id } } })).response.status).toBe(404);
    }
    await completed(client, id);
  });
});

describe('bulk import after a crash', () => {
  async function pendingAction(count: number, prefix: string): Promise<{ client: ApiClient; job: BulkJob }> {
    const { client, organizationId } = await freshTenant();
    // Accepted while this file's workers are off, so the rows wait for the runs below.
    const id = await submit(client, Array.from({ length: count }, (_, i) => row(i, prefix)));
    return { client, job: { bulkActionId: id, organizationId, environment: 'production' } };
  }

  /** Runs `body` with this file's bulk workers off, then lets the job the POST queued end. */
  async function workersOff(body: () => Promise<void>): Promise<void> {
    await app.boss.offWork('bulk-import');
    try {
      await body();
    } finally {
      await app.startWorkers();
      // The job the POST queued runs now and finds nothing left; let it end before the file does.
      for (let attempt = 0; attempt < 100; attempt++) {
        const [waiting] = await app.db('pgboss.job').where({ name: 'bulk-import' }).whereIn('state', ['created', 'active', 'retry']).count({ count: '*' });
        if (Number(waiting?.count) === 0) break;
        await new Promise((done) => setTimeout(done, 100));
      }
    }
  }

  test('a chunk interrupted before its commit is redone, and every row is created exactly once', () =>
    workersOff(async () => {
      const { client, job } = await pendingAction(600, 'C');
      // A worker that dies mid-chunk: its transaction never commits.
      const crashed = app.db.transaction(async (trx) => {
        const rows = await trx('bulk_rows').where({ bulk_action_id: job.bulkActionId, status: 'pending' }).limit(250).forUpdate().select('position');
        expect(rows).toHaveLength(250);
        await trx('customers').insert({ organization_id: job.organizationId, environment: 'production', name: 'half-written', email: 'x@y.example', external_id: 'C-CUST-0' });
        throw new Error('killed');
      });
      await expect(crashed).rejects.toThrow('killed');
      // The job runs again, twice at once (a retry and a resumed job), in chunks of 250 rows
      // (BULK_CHUNK_ROWS): rows are claimed, never shared.
      const deps = { ...app.deps, config: { ...app.deps.config, bulkChunkRows: 250 } };
      await Promise.all([runBulkImport(deps, job), runBulkImport(deps, job)]);
      expect(await completed(client, job.bulkActionId)).toMatchObject({ processed: 600, failed: 0 });
      expect((await client.GET('/customers', { params: { query: { limit: 1 } } })).data!.meta.total).toBe(600);
      const { rows } = await app.db.raw(
        `SELECT external_id, count(*) FROM debt_accounts WHERE organization_id = ? GROUP BY external_id HAVING count(*) > 1`,
        [job.organizationId],
      );
      expect(rows).toEqual([]);
    }));

  test('rows written by COPY roll back with the transaction that wrote them', async () => {
    const { organizationId } = await freshTenant();
    const killed = app.db.transaction(async (trx) => {
      await copyRows(trx, 'locations', [{ organization_id: organizationId, environment: 'production', name: 'Never kept', external_id: 'RB-LOC' }]);
      expect(await trx('locations').where({ organization_id: organizationId }).pluck('external_id')).toEqual(['RB-LOC']);
      throw new Error('killed');
    });
    await expect(killed).rejects.toThrow('killed');
    expect(await app.db('locations').where({ organization_id: organizationId })).toEqual([]);
    // Rows naming different columns are refused rather than written with a column lost.
    const tenant = { organization_id: organizationId, environment: 'production' };
    const uneven = app.db.transaction((trx) => copyRows(trx, 'locations', [{ ...tenant, name: 'One' }, { ...tenant, name: 'Two', external_id: 'RB-TWO' }]));
    await expect(uneven).rejects.toThrow(/every row must have exactly the columns/);
    expect(await app.db('locations').where({ organization_id: organizationId })).toEqual([]);
  });

  test('an external_id created through the API after the check fails only its own row', () =>
    workersOff(async () => {
      const { client, job } = await pendingAction(3, 'U');
      // Another request creates U-CUST-1 and has not committed yet: the import's check cannot
      // see it, and the import's write of that customer waits for it.
      const other = await app.db.transaction();
      try {
        await other('customers').insert({ organization_id: job.organizationId, environment: 'production', name: 'Through the API', email: 'api@y.example', external_id: 'U-CUST-1' });
        const run = runBulkImport(app.deps, job);
        expect(await someoneWaitsOnALock()).toBe(true);
        await other.commit();
        await run;
      } finally {
        if (!other.isCompleted()) await other.rollback();
      }
      expect(await completed(client, job.bulkActionId)).toMatchObject({ processed: 3, failed: 1 });
      const { data } = await errorsOf(client, job.bulkActionId);
      expect(data.map((record) => [record.id, record.errors.customer[0]?.messages])).toEqual([[1, { external_id: ['has already been taken'] }]]);
      for (const key of ['U-A-0', 'U-B-2']) expect((await client.GET('/debt-accounts/{id}', { params: { path: { id: key } } })).response.status).toBe(200);
      expect((await client.GET('/debt-accounts/{id}', { params: { path: { id: 'U-P-1' } } })).response.status).toBe(404);
      expect((await client.GET('/customers/{id}', { params: { path: { id: 'U-CUST-1' } } })).data!.data.name).toBe('Through the API');
    }));

  test('a location created through the API after the check is the one the rows use: made once, no row fails', () =>
    workersOff(async () => {
      const { client, job } = await pendingAction(3, 'V');
      // An account naming V-LOC is being created and has not committed: the import's check
      // cannot see its location, and the import's insert of V-LOC waits for it.
      const other = await app.db.transaction();
      try {
        await other('locations').insert({ organization_id: job.organizationId, environment: 'production', name: 'Through the API', external_id: 'V-LOC' });
        // One row per transaction (BULK_CHUNK_ROWS=1): no smaller chunk to fall back on.
        const run = runBulkImport({ ...app.deps, config: { ...app.deps.config, bulkChunkRows: 1 } }, job);
        expect(await someoneWaitsOnALock()).toBe(true);
        await other.commit();
        await run;
      } finally {
        if (!other.isCompleted()) await other.rollback();
      }
      expect(await completed(client, job.bulkActionId)).toMatchObject({ processed: 3, failed: 0 });
      const location = (await client.GET('/locations/{id}', { params: { path: { id: 'V-LOC' } } })).data!.data;
      expect(location).toMatchObject({ name: 'Through the API', debt_accounts_count: 9 });
      expect(await app.db('locations').where({ organization_id: job.organizationId })).toHaveLength(1);
    }));
});
