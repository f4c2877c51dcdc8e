/**
 * Customer payment methods (spec 2.4, 4.4; operation createPaymentMethod) and how they read
 * back on the customer (`include=payment_methods...`): what an integrator sees.
 */
import type { Schemas } from '../../client';
import { expectFieldError, newCustomer, unique, UNKNOWN_UUID, type ErrorBody } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type CardInput = Schemas['CardInput'];
type AchInput = Schemas['AchInput'];
type PaymentMethod = Schemas['PaymentMethod'];

/** `prefix` followed by the Luhn check digit that makes the whole number pass. */
function withLuhn(prefix: string): string {
  for (let check = 0; check <= 9; check++) {
    const digits = `${prefix}${check}`;
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    if (sum % 10 === 0) return digits;
  }
  throw new Error('unreachable');
}

// Expiry dates relative to today, in UTC (a card is valid through the end of its expiry month).
const now = new Date();
const THIS_MONTH = now.getUTCMonth() + 1;
const THIS_YEAR = now.getUTCFullYear();
const LAST_MONTH = THIS_MONTH === 1 ? { month: 12, year: THIS_YEAR - 1 } : { month: THIS_MONTH - 1, year: THIS_YEAR };
const twoDigits = (year: number) => String(year % 100).padStart(2, '0');
const FUTURE_YEAR = THIS_YEAR + 3;

const SECURITY_CODE = '9731';
const visa = (): CardInput => ({
  card_holder: 'Maria Gonzalez',
  card_number: '4242424242424242',
  card_expiration_month: 8,
  card_expiration_year: FUTURE_YEAR % 100,
  card_security_code: SECURITY_CODE,
  card_postal_code: '78704',
});
const checking = (): AchInput => ({
  account_holder: 'Maria Gonzalez',
  account_type: 'checking',
  routing_number: '011000015',
  account_number: '000123456789',
  account_zip: '78704',
  account_state: 'TX',
});

function addMethod(customer: string, body: { card: CardInput } | { ach: AchInput }) {
  return app.api.POST('/customers/{id}/payment-methods', { params: { path: { id: customer } }, body });
}

async function addCard(customer: string, card: Partial<CardInput> = {}): Promise<PaymentMethod> {
  const { data, response, error } = await addMethod(customer, { card: { ...visa(), ...card } });
  if (response.status !== 201) throw new Error(`card create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

async function addAch(customer: string, ach: Partial<AchInput> = {}): Promise<PaymentMethod> {
  const { data, response, error } = await addMethod(customer, { ach: { ...checking(), ...ach } });
  if (response.status !== 201) throw new Error(`ach create failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data;
}

/** The customer's payment methods as read back with `include=payment_methods`. */
async function methodsOf(customer: string): Promise<PaymentMethod[]> {
  const { data, response, error } = await app.api.GET('/customers/{id}', {
    params: { path: { id: customer }, query: { include: 'payment_methods' } },
  });
  if (response.status !== 200) throw new Error(`customer read failed: ${response.status} ${JSON.stringify(error)}`);
  return data!.data.payment_methods!;
}


/** Sends a body the types forbid, and expects a 422 naming `key` (when given) and nothing stored. */
async function expectRejected(body: unknown, key?: string): Promise<void> {
  const customer = await newCustomer(app.api);
  const { response, error } = await app.api.POST('/customers/{id}/payment-methods', {
    params: { path: { id: customer.id } },
    body: body as never,
  });
  expect(response.status).toBe(422);
  if (key) expectFieldError(error, key);
  else expect((error as ErrorBody).errorCode).toBe('validation_failed');
  expect(await methodsOf(customer.id)).toEqual([]);
}

describe('POST /customers/{id}/payment-methods: the body', () => {
  test('when both card and ach are given, answers 422 and stores nothing', async () => {
    await expectRejected({ card: visa(), ach: checking() });
  });

  test('when neither card nor ach is given, answers 422 and stores nothing', async () => {
    await expectRejected({});
  });

  test('when an unknown top-level field comes with a card, answers 422 and stores nothing', async () => {
    await expectRejected({ card: visa(), save_for_later: true });
  });

  test('when only an unknown top-level field is given, answers 422 and stores nothing', async () => {
    await expectRejected({ paypal: { email: 'maria@mail.debt-collection.example' } });
  });

  test('when card is null, answers 422 and stores nothing', async () => {
    await expectRejected({ card: null });
  });

  test('when the body is not valid JSON, answers 400 and stores nothing', async () => {
    const customer = await newCustomer(app.api);

    const response = await fetch(`${app.baseUrl}/customers/${customer.id}/payment-methods`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${app.organization.production_token}`, 'Content-Type': 'application/json' },
      body: `{"card": {"card_number": "4242424242424242"`,
    });

    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).errorCode).toBe('bad_request');
    expect(await methodsOf(customer.id)).toEqual([]);
  });
});

describe('POST /customers/{id}/payment-methods: card', () => {
  test('when the card is valid, answers 201 with last four, four-digit year, brand and zip, as a primary card', async () => {
    const customer = await newCustomer(app.api);

    const { data, response } = await addMethod(customer.id, { card: visa() });

    expect(response.status).toBe(201);
    expect(data!.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'card',
      card_token: {
        card_holder: 'Maria Gonzalez',
        card_number: '4242',
        expiration_month: 8,
        expiration_year: FUTURE_YEAR,
        card_type: 'visa',
        card_zip: '78704',
      },
      bank_account: null,
      is_primary: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await methodsOf(customer.id)).toEqual([data!.data]);
  });

  test('never shows the full card number or the security code in the answer', async () => {
    const customer = await newCustomer(app.api);

    const { data, response } = await addMethod(customer.id, { card: visa() });
    const read = await app.api.GET('/customers/{id}', {
      params: { path: { id: customer.id }, query: { include: 'payment_methods,payment_methods.chargeable,payment_methods.billing_address' } },
    });

    expect(response.status).toBe(201);
    expect(read.response.status).toBe(200);
    for (const text of [JSON.stringify(data), JSON.stringify(read.data)]) {
      expect(text).not.toContain('4242424242424242');
      expect(text).not.toContain(`"${SECURITY_CODE}"`);
      expect(text).not.toContain(`:${SECURITY_CODE}`);
      expect(text).not.toMatch(/security|cvv|cvc/i);
    }
  });

  test.each([
    ['visa', '4242424242424242', '4242'],
    ['mastercard', '5555555555554444', '4444'],
    ['amex', '378282246310005', '0005'],
    ['discover', '6011111111111117', '1117'],
  ])('when the number is a Luhn-valid %s, answers 201 recognising the brand', async (brand, number, last4) => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_number: number });

    expect(method.card_token).toMatchObject({ card_type: brand, card_number: last4 });
    expect(JSON.stringify(method)).not.toContain(number);
  });

  test('when the number matches no known network but passes Luhn, answers 201 with card_type unknown', async () => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_number: withLuhn('900000000000000') });

    expect(method.card_token?.card_type).toBe('unknown');
  });

  test.each([
    ['12 digits', withLuhn('42424242424')],
    ['19 digits', withLuhn('424242424242424242')],
  ])('when the number has %s and passes Luhn, answers 201 with its last four', async (_case, number) => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_number: number });

    expect(method.card_token?.card_number).toBe(number.slice(-4));
  });

  test.each([
    ['fails the Luhn check', '4242424242424241'],
    ['has 11 digits (Luhn-valid)', withLuhn('4242424242')],
    ['has 20 digits (Luhn-valid)', withLuhn('4242424242424242424')],
    ['has spaces', '4242 4242 4242 4242'],
    ['has dashes', '4242-4242-4242-4242'],
    ['is empty', ''],
  ])('when the number %s, answers 422 on card.card_number and stores nothing', async (_case, number) => {
    await expectRejected({ card: { ...visa(), card_number: number } }, 'card.card_number');
  });

  test.each([
    ['integer 1', 1, 1],
    ['integer 12', 12, 12],
    ['string "01"', '01', 1],
    ['string "12"', '12', 12],
    ['string "8"', '8', 8],
  ])('when the expiration month is %s, answers 201 with it as an integer', async (_case, month, expected) => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_expiration_month: month });

    expect(method.card_token?.expiration_month).toBe(expected);
  });

  test.each([
    ['integer 0', 0],
    ['integer 13', 13],
    ['string "0"', '0'],
    ['string "00"', '00'],
    ['string "13"', '13'],
    ['string "aug"', 'aug'],
  ])('when the expiration month is %s, answers 422 on card.card_expiration_month and stores nothing', async (_case, month) => {
    await expectRejected({ card: { ...visa(), card_expiration_month: month } }, 'card.card_expiration_month');
  });

  test('when the card expires this month, answers 201 (valid through the end of the month)', async () => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_expiration_month: THIS_MONTH, card_expiration_year: THIS_YEAR % 100 });

    expect(method.card_token).toMatchObject({ expiration_month: THIS_MONTH, expiration_year: THIS_YEAR });
  });

  test('when the year is a two-digit string, answers 201 with the four-digit year', async () => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_expiration_year: twoDigits(FUTURE_YEAR) });

    expect(method.card_token?.expiration_year).toBe(FUTURE_YEAR);
  });

  test('when the card expired last month, answers 422 on card.card_expiration_year and stores nothing', async () => {
    await expectRejected(
      { card: { ...visa(), card_expiration_month: LAST_MONTH.month, card_expiration_year: twoDigits(LAST_MONTH.year) } },
      'card.card_expiration_year',
    );
  });

  test('when the card expired in an earlier year, answers 422 on card.card_expiration_year and stores nothing', async () => {
    await expectRejected({ card: { ...visa(), card_expiration_month: 12, card_expiration_year: (THIS_YEAR - 1) % 100 } }, 'card.card_expiration_year');
  });

  test.each([
    ['four digits', 2029],
    ['three digits as a string', '029'],
    ['integer 100', 100],
  ])('when the year has %s, answers 422 on card.card_expiration_year and stores nothing', async (_case, year) => {
    await expectRejected({ card: { ...visa(), card_expiration_year: year } }, 'card.card_expiration_year');
  });

  test.each([
    ['3 digits', '123'],
    ['4 digits', '1234'],
  ])('when the security code has %s, answers 201', async (_case, code) => {
    const customer = await newCustomer(app.api);

    const { response } = await addMethod(customer.id, { card: { ...visa(), card_security_code: code } });

    expect(response.status).toBe(201);
  });

  test('when there is no security code, answers 201', async () => {
    const customer = await newCustomer(app.api);
    const { card_security_code: _omitted, ...card } = visa();

    const { response } = await addMethod(customer.id, { card });

    expect(response.status).toBe(201);
  });

  test.each([
    ['2 digits', '12'],
    ['5 digits', '12345'],
    ['letters', '12a'],
  ])('when the security code has %s, answers 422 on card.card_security_code and stores nothing', async (_case, code) => {
    await expectRejected({ card: { ...visa(), card_security_code: code } }, 'card.card_security_code');
  });

  test('when there is no card_postal_code, answers 201 with card_zip null', async () => {
    const customer = await newCustomer(app.api);
    const { card_postal_code: _omitted, ...card } = visa();

    const { data, response } = await addMethod(customer.id, { card });

    expect(response.status).toBe(201);
    expect(data!.data.card_token?.card_zip).toBeNull();
  });

  test("when card_postal_code is '00501', answers 201 with card_zip '00501'", async () => {
    const customer = await newCustomer(app.api);

    const method = await addCard(customer.id, { card_postal_code: '00501' });

    expect(method.card_token?.card_zip).toBe('00501');
  });

  test.each([
    ['4 digits', '7870'],
    ['6 digits', '787041'],
    ['letters', 'ABCDE'],
  ])('when card_postal_code has %s, answers 422 on card.card_postal_code and stores nothing', async (_case, zip) => {
    await expectRejected({ card: { ...visa(), card_postal_code: zip } }, 'card.card_postal_code');
  });

  test.each(['card_holder', 'card_number', 'card_expiration_month', 'card_expiration_year'] as const)(
    'when %s is missing, answers 422 on it and stores nothing',
    async (field) => {
      const card: Record<string, unknown> = { ...visa() };
      delete card[field];
      await expectRejected({ card }, `card.${field}`);
    },
  );

  test('when the card has an unknown field, answers 422 and stores nothing', async () => {
    await expectRejected({ card: { ...visa(), card_pin: '1234' } });
  });

  test('when several card fields are wrong, answers 422 naming every one of them', async () => {
    const customer = await newCustomer(app.api);

    const { response, error } = await app.api.POST('/customers/{id}/payment-methods', {
      params: { path: { id: customer.id } },
      body: { card: { ...visa(), card_expiration_month: 13, card_security_code: '12', card_postal_code: '7870' } } as never,
    });

    expect(response.status).toBe(422);
    for (const key of ['card.card_expiration_month', 'card.card_security_code', 'card.card_postal_code']) expectFieldError(error, key);
    expect(await methodsOf(customer.id)).toEqual([]);
  });

  test('when the number fails Luhn and the card has expired, answers 422 naming both', async () => {
    const customer = await newCustomer(app.api);

    const { response, error } = await app.api.POST('/customers/{id}/payment-methods', {
      params: { path: { id: customer.id } },
      body: {
        card: { ...visa(), card_number: '4242424242424241', card_expiration_month: LAST_MONTH.month, card_expiration_year: twoDigits(LAST_MONTH.year) },
      },
    });

    expect(response.status).toBe(422);
    expectFieldError(error, 'card.card_number');
    expectFieldError(error, 'card.card_expiration_year');
    expect(await methodsOf(customer.id)).toEqual([]);
  });
});

describe('POST /customers/{id}/payment-methods: ach', () => {
  test('when the account is valid, answers 201 with both numbers masked and ownership personal, as primary', async () => {
    const customer = await newCustomer(app.api);

    const { data, response } = await addMethod(customer.id, { ach: checking() });

    expect(response.status).toBe(201);
    expect(data!.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'ach',
      card_token: null,
      bank_account: {
        account_holder: 'Maria Gonzalez',
        account_type: 'checking',
        ownership_type: 'personal',
        routing_number: '*****0015',
        account_number: '********6789',
        account_zip: '78704',
        account_state: 'TX',
      },
      is_primary: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await methodsOf(customer.id)).toEqual([data!.data]);
  });

  test('never shows the full account or routing number in the answer', async () => {
    const customer = await newCustomer(app.api);

    const { data, response } = await addMethod(customer.id, { ach: { ...checking(), account_number: '98765432101234' } });
    const read = await app.api.GET('/customers/{id}', {
      params: { path: { id: customer.id }, query: { include: 'payment_methods,payment_methods.chargeable,payment_methods.billing_address' } },
    });

    expect(response.status).toBe(201);
    expect(read.response.status).toBe(200);
    for (const text of [JSON.stringify(data), JSON.stringify(read.data)]) {
      expect(text).not.toContain('98765432101234');
      expect(text).not.toContain('011000015');
    }
  });

  test.each([
    ['011000015', '*****0015'],
    ['021000021', '*****0021'],
    ['026009593', '*****9593'],
  ])('when the routing number is %s, answers 201 with it masked as %s', async (routing, masked) => {
    const customer = await newCustomer(app.api);

    const method = await addAch(customer.id, { routing_number: routing });

    expect(method.bank_account?.routing_number).toBe(masked);
  });

  test.each([
    ['fails the ABA checksum', '011000016'],
    ['is all zeros', '000000000'],
    ['has 8 digits', '01100001'],
    ['has 10 digits', '0110000150'],
    ['has letters', '01100001A'],
  ])('when the routing number %s, answers 422 on ach.routing_number and stores nothing', async (_case, routing) => {
    await expectRejected({ ach: { ...checking(), routing_number: routing } }, 'ach.routing_number');
  });

  test.each([
    ['4 digits', '6789', '6789'],
    ['17 digits', '12345678901236789', '*************6789'],
    ['12 digits', '000123456789', '********6789'],
  ])('when the account number has %s, answers 201 with it masked as %s', async (_case, account, masked) => {
    const customer = await newCustomer(app.api);

    const { data, response, error } = await addMethod(customer.id, { ach: { ...checking(), account_number: account } });

    expect({ status: response.status, error }).toEqual({ status: 201, error: undefined });
    expect(data!.data.bank_account?.account_number).toBe(masked);
    expect((await methodsOf(customer.id))[0]?.bank_account?.account_number).toBe(masked);
  });

  test.each([
    ['3 digits', '678'],
    ['18 digits', '123456789012346789'],
    ['letters', '00012345678A'],
    ['dashes', '000-123-456'],
  ])('when the account number has %s, answers 422 on ach.account_number and stores nothing', async (_case, account) => {
    await expectRejected({ ach: { ...checking(), account_number: account } }, 'ach.account_number');
  });

  test.each(['checking', 'savings'] as const)('when account_type is %s, answers 201 with it', async (type) => {
    const customer = await newCustomer(app.api);

    const method = await addAch(customer.id, { account_type: type });

    expect(method.bank_account?.account_type).toBe(type);
  });

  test.each(['business', 'Checking', ''])('when account_type is %j, answers 422 on ach.account_type and stores nothing', async (type) => {
    await expectRejected({ ach: { ...checking(), account_type: type } }, 'ach.account_type');
  });

  test.each([
    ['4 digits', '7870'],
    ['6 digits', '787041'],
    ['letters', 'ABCDE'],
  ])('when account_zip has %s, answers 422 on ach.account_zip and stores nothing', async (_case, zip) => {
    await expectRejected({ ach: { ...checking(), account_zip: zip } }, 'ach.account_zip');
  });

  test.each(['TX', 'DC', 'PR'])('when account_state is %s, answers 201 with it', async (state) => {
    const customer = await newCustomer(app.api);

    const method = await addAch(customer.id, { account_state: state });

    expect(method.bank_account?.account_state).toBe(state);
  });

  test.each([
    ['XX, not a US state', 'XX'],
    ['lowercase tx', 'tx'],
    ['the full name', 'Texas'],
    ['one letter', 'T'],
  ])('when account_state is %s, answers 422 on ach.account_state and stores nothing', async (_case, state) => {
    await expectRejected({ ach: { ...checking(), account_state: state } }, 'ach.account_state');
  });

  test.each(['account_holder', 'account_type', 'routing_number', 'account_number', 'account_zip', 'account_state'] as const)(
    'when %s is missing, answers 422 on it and stores nothing',
    async (field) => {
      const ach: Record<string, unknown> = { ...checking() };
      delete ach[field];
      await expectRejected({ ach }, `ach.${field}`);
    },
  );

  test('when the account has an unknown field, answers 422 and stores nothing', async () => {
    await expectRejected({ ach: { ...checking(), ownership_type: 'business' } });
  });

  test('when the routing checksum fails and the state is unknown, answers 422 naming both', async () => {
    const customer = await newCustomer(app.api);

    const { response, error } = await addMethod(customer.id, { ach: { ...checking(), routing_number: '011000016', account_state: 'XX' } });

    expect(response.status).toBe(422);
    expectFieldError(error, 'ach.routing_number');
    expectFieldError(error, 'ach.account_state');
    expect(await methodsOf(customer.id)).toEqual([]);
  });
});

describe('POST /customers/{id}/payment-methods: the customer', () => {
  test("the customer's first method is primary and the second is not", async () => {
    const customer = await newCustomer(app.api);

    const first = await addCard(customer.id);
    const second = await addAch(customer.id);

    expect(first.is_primary).toBe(true);
    expect(second.is_primary).toBe(false);
    const methods = await methodsOf(customer.id);
    expect(methods.map((method) => [method.id, method.is_primary])).toEqual([
      [first.id, true],
      [second.id, false],
    ]);
  });

  test("a rejected method does not count as the customer's first: the next valid one is primary", async () => {
    const customer = await newCustomer(app.api);
    const rejected = await addMethod(customer.id, { card: { ...visa(), card_number: '4242424242424241' } });
    expect(rejected.response.status).toBe(422);

    const method = await addAch(customer.id);

    expect(method.is_primary).toBe(true);
  });

  test("a method of another customer does not make this customer's first method non-primary", async () => {
    const maria = await newCustomer(app.api);
    const john = await newCustomer(app.api, { name: 'John Smith' });
    await addCard(maria.id);

    const johns = await addCard(john.id);

    expect(johns.is_primary).toBe(true);
    expect((await methodsOf(john.id)).map((method) => method.id)).toEqual([johns.id]);
  });

  test('when the customer is addressed by external_id, adds the method to that customer', async () => {
    const externalId = unique('CUST');
    const customer = await newCustomer(app.api, { external_id: externalId });

    const { data, response } = await addMethod(externalId, { card: visa() });

    expect(response.status).toBe(201);
    expect((await methodsOf(customer.id)).map((method) => method.id)).toEqual([data!.data.id]);
  });

  test('when the customer does not exist, answers 404', async () => {
    const { response, error } = await addMethod(UNKNOWN_UUID, { card: visa() });

    expect(response.status).toBe(404);
    expect((error as ErrorBody).errorCode).toBe('not_found');
  });

  test.each([
    ['another organization', () => app.other],
    ['the sandbox of the same organization', () => app.sandbox],
  ])('when the token is of %s, answers 404 and stores nothing', async (_case, client) => {
    const customer = await newCustomer(app.api);

    const card = await client().POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { card: visa() } });
    const ach = await client().POST('/customers/{id}/payment-methods', { params: { path: { id: customer.id } }, body: { ach: checking() } });

    expect(card.response.status).toBe(404);
    expect((card.error as ErrorBody).errorCode).toBe('not_found');
    expect(ach.response.status).toBe(404);
    expect(await methodsOf(customer.id)).toEqual([]);
  });

  test('when the token is of another organization and the customer is named by external_id, answers 404', async () => {
    const externalId = unique('CUST');
    const customer = await newCustomer(app.api, { external_id: externalId });

    const { response } = await app.other.POST('/customers/{id}/payment-methods', { params: { path: { id: externalId } }, body: { card: visa() } });

    expect(response.status).toBe(404);
    expect(await methodsOf(customer.id)).toEqual([]);
  });
});

describe('GET /customers/{id}?include=payment_methods,...', () => {
  const ALL = 'payment_methods,payment_methods.chargeable,payment_methods.billing_address';

  test('shows each method as chargeable with the primary address as billing_address', async () => {
    const customer = await newCustomer(app.api);
    const home = await app.api.POST('/customers/{id}/addresses', {
      params: { path: { id: customer.id } },
      body: { name: 'Home', line1: '1208 Oak Hollow Dr', city: 'Austin', state: 'TX', country: 'US', postal_code: '78704' },
    });
    const work = await app.api.POST('/customers/{id}/addresses', {
      params: { path: { id: customer.id } },
      body: { name: 'Work', line1: '500 W 2nd St', city: 'Austin', state: 'TX', country: 'US', postal_code: '78701', is_primary: true },
    });
    expect([home.response.status, work.response.status]).toEqual([201, 201]);
    const card = await addCard(customer.id, { card_expiration_month: THIS_MONTH, card_expiration_year: THIS_YEAR % 100 });
    const ach = await addAch(customer.id);
    const primary = (await app.api.GET('/customers/{id}/addresses', { params: { path: { id: customer.id } } })).data!.data.find(
      (address) => address.is_primary,
    );
    expect(primary?.id).toBe(work.data!.data.id);

    const { data, response } = await app.api.GET('/customers/{id}', { params: { path: { id: customer.id }, query: { include: ALL } } });

    expect(response.status).toBe(200);
    expect(data!.data.payment_methods).toEqual([
      { ...card, chargeable: true, billing_address: primary },
      { ...ach, chargeable: true, billing_address: primary },
    ]);
    // The include replaces the default set: no addresses, no metadata.
    expect(data!.data.addresses).toBeUndefined();
    expect(data!.data.metadata).toBeUndefined();
  });

  test('when the customer has no address, billing_address is null', async () => {
    const customer = await newCustomer(app.api);
    const card = await addCard(customer.id);

    const { data, response } = await app.api.GET('/customers/{id}', { params: { path: { id: customer.id }, query: { include: ALL } } });

    expect(response.status).toBe(200);
    expect(data!.data.payment_methods).toEqual([{ ...card, chargeable: true, billing_address: null }]);
  });

  test('when the primary address changes, billing_address follows it', async () => {
    const customer = await newCustomer(app.api);
    await app.api.POST('/customers/{id}/addresses', { params: { path: { id: customer.id } }, body: { postal_code: '78704' } });
    const second = await app.api.POST('/customers/{id}/addresses', { params: { path: { id: customer.id } }, body: { postal_code: '78701' } });
    await addAch(customer.id);
    await app.api.PUT('/customers/{id}/addresses/{addressId}', {
      params: { path: { id: customer.id, addressId: second.data!.data.id } },
      body: { is_primary: true },
    });

    const { data } = await app.api.GET('/customers/{id}', { params: { path: { id: customer.id }, query: { include: ALL } } });

    expect(data!.data.payment_methods?.[0]?.billing_address).toMatchObject({ id: second.data!.data.id, postal_code: '78701', is_primary: true });
  });

  test('with include=payment_methods only, the methods carry neither chargeable nor billing_address', async () => {
    const customer = await newCustomer(app.api);
    await addCard(customer.id);

    const methods = await methodsOf(customer.id);

    expect(methods).toHaveLength(1);
    expect('chargeable' in methods[0]!).toBe(false);
    expect('billing_address' in methods[0]!).toBe(false);
  });

  test('when the customer is named by external_id, shows its methods', async () => {
    const externalId = unique('CUST');
    const customer = await newCustomer(app.api, { external_id: externalId });
    const ach = await addAch(customer.id);

    const { data, response } = await app.api.GET('/customers/{id}', { params: { path: { id: externalId }, query: { include: ALL } } });

    expect(response.status).toBe(200);
    expect(data!.data.payment_methods).toEqual([{ ...ach, chargeable: true, billing_address: null }]);
  });
});

describe('what is stored', () => {
  test('the database never holds a card number or security code, nor the ACH numbers in clear; the logs neither', async () => {
    const cardNumber = '5555555555554444';
    const accountNumber = '98765432101234';
    const routingNumber = '026009593';
    const customer = await newCustomer(app.api);
    const card = await addCard(customer.id, { card_number: cardNumber, card_security_code: SECURITY_CODE });
    const ach = await addAch(customer.id, { account_number: accountNumber, routing_number: routingNumber });

    const rows: Record<string, unknown>[] = await app.db('payment_methods').where({ customer_id: customer.id });

    expect(rows.map((row) => row.id).sort()).toEqual([card.id, ach.id].sort());
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        const text = value instanceof Date ? value.toISOString() : typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
        const where = `payment_methods.${column} = ${text}`;
        expect({ where, hasCardNumber: text.includes(cardNumber) }).toEqual({ where, hasCardNumber: false });
        // As a run of exactly these digits, in every column a person could read: UUIDs, the HMAC
        // fingerprint and the AES-sealed values are random-looking text that may hold any digits.
        const opaque = /fingerprint|sealed/.test(column) || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
        const runs: string[] = opaque ? [] : (text.match(/\d+/g) ?? []);
        expect({ where, hasSecurityCode: runs.includes(SECURITY_CODE) }).toEqual({ where, hasSecurityCode: false });
        expect({ where, hasAccountNumber: text.includes(accountNumber) }).toEqual({ where, hasAccountNumber: false });
        expect({ where, hasRoutingNumber: text.includes(routingNumber) }).toEqual({ where, hasRoutingNumber: false });
      }
    }
    const logs = app.logs.join('');
    expect(logs).not.toContain(cardNumber);
    expect(logs).not.toContain(accountNumber);
    expect(logs).not.toContain(routingNumber);
    expect(logs).not.toContain(`"${SECURITY_CODE}"`);
  });
});
