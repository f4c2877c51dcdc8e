/**
 * Events recorded together (`events.together`, what recording a charge's answer uses): what a
 * transaction's work records is written once, when the work ends, in the order it was recorded,
 * each payload showing its record as the work left it; a `.delete` is written at once, with
 * what was held before it, while its record still exists. What GET /events shows is the test.
 */
import { startTestApp, type TestApp } from '../support/test-app';
import { createOrganization } from '../../server/organizations/organization-repo';
import type { Tenant } from '../../server/kernel/tenant';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

/** A fresh organization's sandbox, so that its event log is the test's own. */
async function freshSandbox() {
  const organization = await createOrganization(app.db, `Together ${Math.random()}`, 'ops@together.example');
  const tenant: Tenant = { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: '' };
  const api = app.clientFor(organization.sandbox_token);
  const customer = (await api.POST('/customers', { body: { name: 'Ivy Chen', email: 'ivy@mail.example' } })).data!.data;
  const logged = async () => (await api.GET('/events', { params: { query: { object_id: customer.id } } })).data!.data.reverse();
  return { tenant, customer, logged };
}

const written = (trx: import('knex').Knex, organizationId: string) => trx('webhook_events').where({ organization_id: organizationId }).count<{ count: string }[]>('* as count').then(([row]) => Number(row!.count));

test('what the work records is written when it ends, in order, each payload showing the record as the work left it', async () => {
  const { tenant, customer, logged } = await freshSandbox();
  const { events } = app.deps;
  let heldBack = -1;
  await app.db.transaction((trx) =>
    events.together(trx, tenant, async () => {
      const before = await written(trx, tenant.organizationId);
      await trx('customers').where({ id: customer.id }).update({ name: 'Ivy Chen-Park' });
      await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
      await trx('customers').where({ id: customer.id }).update({ name: 'Ivy Park' });
      await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
      heldBack = (await written(trx, tenant.organizationId)) - before;
    }),
  );
  expect(heldBack).toBe(0);
  const log = await logged();
  expect(log.map((event) => event.type)).toEqual(['customer.create', 'customer.update', 'customer.update']);
  expect(log.slice(1).map((event) => (event.data as { name: string }).name)).toEqual(['Ivy Park', 'Ivy Park']);
  expect(log[2]!.sequence).toBeGreaterThan(log[1]!.sequence);
});

test('a delete is written at once, with what was held before it, while its record still exists', async () => {
  const { tenant, customer, logged } = await freshSandbox();
  const { events } = app.deps;
  let writtenByTheDelete = -1;
  await app.db.transaction((trx) =>
    events.together(trx, tenant, async () => {
      const before = await written(trx, tenant.organizationId);
      await trx('customers').where({ id: customer.id }).update({ name: 'Ivy Gone' });
      await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
      await events.record(trx, tenant, [{ name: 'customer.delete', ids: [customer.id] }]);
      writtenByTheDelete = (await written(trx, tenant.organizationId)) - before;
      await trx('customers').where({ id: customer.id }).delete();
    }),
  );
  expect(writtenByTheDelete).toBe(2);
  const log = await logged();
  expect(log.map((event) => event.type)).toEqual(['customer.create', 'customer.update', 'customer.delete']);
  expect(log.slice(1).map((event) => (event.data as { name: string }).name)).toEqual(['Ivy Gone', 'Ivy Gone']);
});

test('nothing held back is written when the work fails', async () => {
  const { tenant, customer, logged } = await freshSandbox();
  const { events } = app.deps;
  await expect(
    app.db.transaction((trx) =>
      events.together(trx, tenant, async () => {
        await events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
        throw new Error('the work failed');
      }),
    ),
  ).rejects.toThrow('the work failed');
  expect((await logged()).map((event) => event.type)).toEqual(['customer.create']);
});
