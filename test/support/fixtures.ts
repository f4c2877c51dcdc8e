/** Small helpers shared by the API tests: data to create, and what an error body must hold. */
import type { ApiClient, Schemas } from '../../client';

export interface ErrorBody {
  error?: string;
  errorCode?: string;
  errors?: Record<string, string[]>;
}

let sequence = 0;
/** A value no other test of this run has used: for external ids. */
export const unique = (prefix: string) => `${prefix}-${++sequence}-${Date.now()}`;
/**
 * A US phone number (area code `area`, exchange 555) that no other customer of this file has:
 * each file has its own database, and a number drawn at random once in a while matched an
 * earlier debtor of the same file, whom the Portal's phone + SSN verification then found instead.
 */
let phoneSequence = 0;
export const uniquePhone = (area = '512') => `${area}555${String(++phoneSequence).padStart(4, '0')}`;
export const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/** A card's expiry year (two digits) three years ahead, so that test cards never expire. */
export const CARD_YEAR = (new Date().getUTCFullYear() + 3) % 100;
/** A card as a charge or a new payment method takes it; 4242… succeeds in the sandbox. */
export const testCard = (number = '4242424242424242') => ({
  card_holder: 'Maria Gonzalez',
  card_number: number,
  card_expiration_month: 8,
  card_expiration_year: CARD_YEAR,
  card_security_code: '9731',
});

/** A bank account as a charge or a new payment method takes it; the sandbox's outcome follows `account_number`. */
export const testAch = (account_number: string) => ({
  account_holder: 'Maria Gonzalez',
  account_type: 'checking' as const,
  routing_number: '110000000',
  account_number,
  account_zip: '78704',
  account_state: 'TX',
});

export const maria = () => ({ name: 'Maria Gonzalez', email: 'maria.gonzalez@mail.debt-collection.example' });

/** Creates a customer through the API (Maria Gonzalez unless `body` says otherwise). */
export async function newCustomer(api: ApiClient, body: Partial<Schemas['CustomerCreate']> = {}) {
  const { data, response, error } = await api.POST('/customers', { body: { ...maria(), ...body } });
  if (response.status !== 201) throw new Error(`customer create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

/** A 422 in the spec's shape that names `key` with at least one message. */
export function expectFieldError(error: unknown, key: string): void {
  const body = error as ErrorBody;
  expect(body.errorCode).toBe('validation_failed');
  expect(typeof body.error).toBe('string');
  expect(Object.keys(body.errors ?? {})).toContain(key);
  expect(body.errors?.[key]?.length).toBeGreaterThan(0);
}

/** Creates a debt account of `customerId` through the API, at a location every test may share. */
export async function newDebtAccount(api: ApiClient, customerId: string, body: Partial<Schemas['DebtAccountCreate']> = {}) {
  const { data, response, error } = await api.POST('/debt-accounts', {
    body: { customer_id: customerId, location_id: 'LOC-LAKESIDE-01', location_name: 'Lakeside Medical Center', balance: 184250, ...body },
  });
  if (response.status !== 201) throw new Error(`account create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

/** A customer (with a fresh external_id) and one debt account of theirs (with one too). */
export async function customerWithAccount(
  api: ApiClient,
  customer: Partial<Schemas['CustomerCreate']> = {},
  account: Partial<Schemas['DebtAccountCreate']> = {},
) {
  const created = await newCustomer(api, { external_id: unique('CUST'), ...customer });
  return { customer: created, account: await newDebtAccount(api, created.id, { external_id: unique('ACC'), ...account }) };
}

/** Creates a customer session through the API; anything but 201 fails the test. */
export async function newSession(api: ApiClient, body: Schemas['CustomerSessionCreate']) {
  const { data, response, error } = await api.POST('/customer-sessions', { body });
  if (response.status !== 201) throw new Error(`session create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

/** Opens a link as a browser would, without following a redirect. */
export function openLink(url: string): Promise<Response> {
  return fetch(url, { redirect: 'manual' });
}

/**
 * A customer (Maria Gonzalez), a debt account of `balance` with a fresh external_id (and
 * `account`'s fields), and the card `cardNumber` saved as the customer's payment method.
 */
export async function accountWithCard(
  api: ApiClient,
  balance = 10_000,
  account: Partial<Schemas['DebtAccountCreate']> = {},
  cardNumber = '4242424242424242',
) {
  const customer = await newCustomer(api);
  const created = await newDebtAccount(api, customer.id, { balance, external_id: unique('DA'), ...account });
  const { data } = await api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: testCard(cardNumber) } });
  return { customer, account: created, methodId: data!.data.id };
}

/** The debt account as the API shows it now. */
export const accountOf = async (api: ApiClient, id: string) => (await api.GET('/debt-accounts/{id}', { params: { path: { id } } })).data!.data;

/** The debt account's current balance as the API shows it now. */
export const balanceOf = async (api: ApiClient, id: string) => (await accountOf(api, id)).current_balance;
