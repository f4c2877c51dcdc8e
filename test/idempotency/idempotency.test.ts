/**
 * Idempotency-Key on POST, as an integrator retrying over a flaky network sees it: replay,
 * reuse, in use, tenancy, expiry and the key's length.
 */
import { randomUUID } from 'node:crypto';
import type { ApiClient } from '../../client';
import { customerWithAccount, maria, unique, type ErrorBody } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

function createCustomer(client: ApiClient, key: string, body: Record<string, unknown>) {
  return client.POST('/customers', { body: { ...maria(), ...body } as never, headers: { 'Idempotency-Key': key } });
}

const customersWith = async (externalId: string) => Number((await app.db('customers').where({ external_id: externalId }).count('* as n').first())!.n);

describe('Idempotency-Key', () => {
  test('a retry with the same key and body gets the same answer, marked replayed, and creates nothing again', async () => {
    const key = randomUUID();
    const body = { external_id: unique('CUST') };
    const first = await createCustomer(app.api, key, body);
    expect(first.response.status).toBe(201);
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    const again = await createCustomer(app.api, key, { ...body });
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
    expect(await customersWith(body.external_id)).toBe(1);
  });

  test('an error answer is kept too: the same 422 again, without running the request', async () => {
    const key = randomUUID();
    const externalId = unique('CUST');
    await createCustomer(app.api, randomUUID(), { external_id: externalId });
    const taken = await createCustomer(app.api, key, { external_id: externalId });
    expect(taken.response.status).toBe(422);
    const again = await createCustomer(app.api, key, { external_id: externalId });
    expect(again.response.status).toBe(422);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.error).toEqual(taken.error);
  });

  test('the same key with another body is a 422 idempotency_key_reused', async () => {
    const key = randomUUID();
    const first = await createCustomer(app.api, key, { external_id: unique('CUST') });
    expect(first.response.status).toBe(201);
    const other = await createCustomer(app.api, key, { external_id: unique('CUST') });
    expect(other.response.status).toBe(422);
    expect((other.error as ErrorBody).errorCode).toBe('idempotency_key_reused');
    expect(Object.keys((other.error as ErrorBody).errors ?? {})).toEqual(['headers.idempotency-key']);
  });

  test('a multipart request: the same key with another file is a 422 idempotency_key_reused; the same file under another name replays', async () => {
    const { account } = await customerWithAccount(app.api);
    const key = randomUUID();
    const send = (text: string, filename: string) => {
      const form = new FormData();
      form.append('name', 'Validation notice');
      form.append('file', new Blob([Buffer.from(`%PDF-1.4\n${text}\n%%EOF\n`)], { type: 'application/pdf' }), filename);
      return fetch(`${app.baseUrl}/debt-accounts/${account.id}/documents`, { method: 'POST', headers: { authorization: `Bearer ${app.organization.production_token}`, 'Idempotency-Key': key }, body: form });
    };
    const first = await send('the first notice', 'notice.pdf');
    expect(first.status).toBe(201);
    const id = ((await first.json()) as { data: { id: string } }).data.id;
    const other = await send('another notice', 'notice.pdf');
    expect(other.status).toBe(422);
    const body = (await other.json()) as ErrorBody;
    expect(body.errorCode).toBe('idempotency_key_reused');
    expect(Object.keys(body.errors ?? {})).toEqual(['headers.idempotency-key']);
    const same = await send('the first notice', 'renamed.pdf');
    expect(same.status).toBe(201);
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    expect(((await same.json()) as { data: { id: string } }).data.id).toBe(id);
    expect(Number((await app.db('documents').where({ debt_account_id: account.id }).count('* as n').first())!.n)).toBe(1);
  });

  test('the same key on another path is a key of its own there: the request runs', async () => {
    const key = randomUUID();
    expect((await createCustomer(app.api, key, { external_id: unique('CUST') })).response.status).toBe(201);
    const elsewhere = await app.api.POST('/locations', { body: { name: 'Lakeside Medical Center' }, headers: { 'Idempotency-Key': key } });
    expect(elsewhere.response.status).toBe(201);
    expect(elsewhere.response.headers.get('idempotent-replayed')).toBeNull();
    expect(elsewhere.data!.data.name).toBe('Lakeside Medical Center');
  });

  test('the same key while the first request still runs is a 409 idempotency_key_in_use; afterwards it replays', async () => {
    const key = randomUUID();
    const body = { external_id: unique('CUST') };
    // Hold the first request inside its work: customers cannot be inserted until this commits.
    const blocker = await app.db.transaction();
    await blocker.raw('LOCK TABLE customers IN SHARE MODE');
    const first = createCustomer(app.api, key, body);
    await waitFor(async () => (await app.db('idempotency_keys').where({ key }).first('status'))?.status === 'running');
    const second = await createCustomer(app.api, key, body);
    expect(second.response.status).toBe(409);
    expect((second.error as ErrorBody).errorCode).toBe('idempotency_key_in_use');
    await blocker.commit();
    const answered = await first;
    expect(answered.response.status).toBe(201);
    const third = await createCustomer(app.api, key, body);
    expect(third.response.headers.get('idempotent-replayed')).toBe('true');
    expect(third.data).toEqual(answered.data);
    expect(await customersWith(body.external_id)).toBe(1);
  });

  test('requests at once, claimed together: one key sent five times runs once (the others 409 or its replay, another body 422), and each other key runs once', async () => {
    const key = randomUUID();
    const body = { external_id: unique('CUST') };
    const others = Array.from({ length: 5 }, () => ({ key: randomUUID(), body: { external_id: unique('CUST') } }));
    const [same, reused, alone] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => createCustomer(app.api, key, body))),
      createCustomer(app.api, key, { external_id: unique('CUST') }),
      Promise.all(others.map((other) => createCustomer(app.api, other.key, other.body))),
    ]);
    const ran = same.filter((answer) => answer.response.status === 201 && answer.response.headers.get('idempotent-replayed') === null);
    expect(ran).toHaveLength(1);
    for (const answer of same.filter((each) => each !== ran[0])) {
      if (answer.response.status === 409) expect((answer.error as ErrorBody).errorCode).toBe('idempotency_key_in_use');
      else expect([answer.response.status, answer.response.headers.get('idempotent-replayed'), answer.data]).toEqual([201, 'true', ran[0]!.data]);
    }
    expect(reused.response.status).toBe(422);
    expect((reused.error as ErrorBody).errorCode).toBe('idempotency_key_reused');
    expect(alone.map((answer) => [answer.response.status, answer.response.headers.get('idempotent-replayed')])).toEqual(others.map(() => [201, null]));
    expect(await customersWith(body.external_id)).toBe(1);
    for (const other of others) expect(await customersWith(other.body.external_id)).toBe(1);
  });

  test('a claim left running by a process that died is taken over after 5 minutes', async () => {
    const key = randomUUID();
    const body = { external_id: unique('CUST') };
    await createCustomer(app.api, key, body);
    await app.db('idempotency_keys').where({ key }).update({ status: 'running', locked_at: app.db.raw(`now() - interval '6 minutes'`) });
    const again = await createCustomer(app.api, key, { external_id: unique('CUST') });
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get('idempotent-replayed')).toBeNull();
  });

  test('keys are per organization and environment: the same key elsewhere is a new request', async () => {
    const key = randomUUID();
    const answers = [];
    for (const client of [app.api, app.sandbox, app.other]) {
      const { response, data } = await createCustomer(client, key, { name: 'Dana Whitfield' });
      expect(response.status).toBe(201);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
      answers.push(data!.data.id);
    }
    expect(new Set(answers).size).toBe(3);
  });

  test('an expired key is pruned by later writes and may be used again for a new request', async () => {
    const key = randomUUID();
    const first = await createCustomer(app.api, key, { external_id: unique('CUST') });
    expect(first.response.status).toBe(201);
    await app.db('idempotency_keys').where({ key }).update({ expires_at: app.db.raw(`now() - interval '1 second'`) });
    const another = randomUUID();
    await createCustomer(app.api, another, { name: 'Dana Whitfield' });
    expect(await app.db('idempotency_keys').where({ key }).first()).toBeUndefined();
    const reused = await createCustomer(app.api, key, { external_id: unique('CUST') });
    expect(reused.response.status).toBe(201);
    expect(reused.response.headers.get('idempotent-replayed')).toBeNull();
    expect(reused.data!.data.id).not.toBe(first.data!.data.id);
  });

  test('a kept record expires 24 hours after the first request', async () => {
    const key = randomUUID();
    await createCustomer(app.api, key, { name: 'Dana Whitfield' });
    const { rows } = await app.db.raw(`SELECT expires_at - created_at AS kept FROM idempotency_keys WHERE key = ?`, [key]);
    expect(rows[0].kept.toPostgres()).toBe('1 days');
  });

  test.each([1, 255])('a key of %i characters is accepted', async (length) => {
    const key = randomUUID().replace(/-/g, '').repeat(8).slice(0, length);
    const { response } = await createCustomer(app.sandbox, key, { name: 'Dana Whitfield' });
    expect(response.status).toBe(201);
    expect((await createCustomer(app.sandbox, key, { name: 'Dana Whitfield' })).response.headers.get('idempotent-replayed')).toBe('true');
  });

  test('a key of 256 characters is a 422 on the header, and nothing is created', async () => {
    const externalId = unique('CUST');
    const { response, error } = await createCustomer(app.api, 'k'.repeat(256), { external_id: externalId });
    expect(response.status).toBe(422);
    expect(Object.keys((error as ErrorBody).errors ?? {})).toEqual(['headers.idempotency-key']);
    expect(await customersWith(externalId)).toBe(0);
  });
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}

test('every POST of the API document takes the one shared Idempotency-Key header and documents its 409', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const document = require('../../generated/openapi.json') as { paths: Record<string, Record<string, { parameters?: { $ref?: string }[]; responses: Record<string, unknown> }>> };
  // A processor's webhook is called by the processor, not by integrators: its own event id makes a repeat change nothing.
  const posts = Object.entries(document.paths).filter(([path, item]) => item.post && path !== '/processor-webhooks/{id}');
  expect(posts.length).toBeGreaterThan(10);
  for (const [path, item] of posts) {
    expect([path, item.post!.parameters?.some((p) => p.$ref === '#/components/parameters/IdempotencyKey')]).toEqual([path, true]);
    expect([path, Object.keys(item.post!.responses)]).toEqual([path, expect.arrayContaining(['409', '422'])]);
  }
});
