/**
 * Saving a payment method sends its numbers to the gateway's vault: we keep the token beside
 * what we show, and no row anywhere holds a card number, a security code or an account number.
 */
import { CARD_YEAR, newCustomer, testAch } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { subscribeToEverything } from '../support/webhooks';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true });
  // The outbox keeps only subscribed events: subscribed, its rows are searched too.
  await subscribeToEverything(app.sandbox);
  await subscribeToEverything(app.api);
});
afterAll(async () => app?.stop());

const card = { card_holder: 'Maria Gonzalez', card_number: '4000000000009995', card_expiration_month: 8, card_expiration_year: CARD_YEAR, card_security_code: '9731' };
const ach = testAch('000222222227');

/** Every row of the tables that payments touch, as one text. */
async function everyRow(): Promise<string> {
  const tables = ['payment_methods', 'sandbox_vault', 'sandbox_payments', 'webhook_events'];
  const rows = await Promise.all(tables.map((table) => app.db(table).select()));
  return JSON.stringify(rows);
}

test('a sandbox card and bank account get a vault token; nothing keeps the numbers or the security code in the clear', async () => {
  const customer = await newCustomer(app.sandbox);
  const saved = await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } });
  expect(saved.response.status).toBe(201);
  const bank = await app.sandbox.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { ach } });
  expect(bank.response.status).toBe(201);
  const rows = await app.db('payment_methods').whereIn('id', [saved.data!.data.id, bank.data!.data.id]).select('gateway_token', 'type');
  expect(rows.map((row) => row.gateway_token)).toEqual([expect.stringMatching(/^tok_/), expect.stringMatching(/^tok_/)]);
  expect(await app.db('sandbox_vault').whereIn('token', rows.map((row) => row.gateway_token)).count('* as n').first()).toEqual({ n: '2' });
  expect(JSON.stringify(saved.data)).not.toContain('gateway_token');
  const text = await everyRow();
  // Whole values only: a keyed fingerprint's hex or a sealed value's base64 may hold four digits by chance.
  for (const secret of ['4000000000009995', '9731', '000222222227']) expect(text).not.toMatch(new RegExp(`(?<![0-9A-Za-z+/])${secret}(?![0-9A-Za-z+/])`));
  expect(app.logs.join('')).not.toContain('4000000000009995');
});

test('in production without PAYMENT_GATEWAY a method is saved as before, without a token', async () => {
  const customer = await newCustomer(app.api);
  const saved = await app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card } });
  expect(saved.response.status).toBe(201);
  const row = await app.db('payment_methods').where({ id: saved.data!.data.id }).first('gateway_token');
  expect(row.gateway_token).toBeNull();
});
