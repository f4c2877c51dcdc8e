/** One of everything the operations' paths name, made through the API, so that a hostile request reaches real data. */
import type { TestApp } from '../../support/test-app';

export interface Fixtures {
  customerId: string;
  addressId: string;
  accountId: string;
  locationId: string;
  webhookId: string;
  deliveryId: string;
  bulkId: string;
  token: string;
  code: string;
}

let round = 0;

export async function seed(app: TestApp): Promise<Fixtures> {
  const n = ++round;
  const must = <T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T => {
    if (!answer.data) throw new Error(`could not make the ${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    return answer.data;
  };
  const customer = must(
    await app.api.POST('/customers', {
      body: { name: 'Maria Gonzalez', email: 'maria@mail.debt-collection.example', external_id: `HOSTILE-${n}`, metadata: { portfolio: 'spring' }, address: { line1: '1 Main St', postal_code: '78704' } },
    }),
    'customer',
  ).data;
  const location = must(await app.api.POST('/locations', { body: { name: 'Lakeside Medical Center', external_id: `HOSTILE-LOC-${n}` } }), 'location').data;
  const account = must(
    await app.api.POST('/debt-accounts', { body: { customer_id: customer.id, location_id: location.id, external_id: `HOSTILE-ACC-${n}`, balance: 1000 } }),
    'debt account',
  ).data;
  const webhook = must(await app.api.POST('/webhooks', { body: { url: `http://127.0.0.1:9/hooks/${n}`, events: ['location.create'], secret: 'hostile_suite_secret_0123' } }), 'webhook').data;
  // An event for the webhook, so that it has a delivery (no worker runs: it stays pending).
  must(await app.api.POST('/locations', { body: { name: 'Riverside Clinic' } }), 'location');
  const deliveries = must(await app.api.GET('/webhooks/{id}/deliveries', { params: { path: { id: webhook.id } } }), 'delivery list').data;
  const session = must(await app.api.POST('/customer-sessions', { body: { customer_id: customer.id, debt_account_id: account.id, short_link: true, is_valid_forever: true } }), 'session').data;
  const bulk = must(await app.api.POST('/bulk', { body: [{ customer: { name: 'Rosa Delgado', email: 'rosa@mail.debt-collection.example' } }] }), 'bulk action').data;
  return {
    customerId: customer.id,
    addressId: (customer as unknown as { address: { id: string }[] }).address[0]!.id,
    accountId: account.id,
    locationId: location.id,
    webhookId: webhook.id,
    deliveryId: deliveries[0]!.id,
    bulkId: bulk.bulk_id,
    token: new URL(session.portal_url).pathname.split('/')[3]!,
    code: new URL(session.short_url!).pathname.split('/').pop()!,
  };
}
