import type { ApiClient, Schemas } from '../../client';
import type { components } from '../../generated/schema';
import { expectFieldError, newCustomer, newDebtAccount, unique, type ErrorBody } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

type DebtAccount = components['schemas']['DebtAccount'];
type Flow =
  | 'phone_ssn_last4'
  | 'phone_date_of_birth'
  | 'phone_postal_code'
  | 'first_name_last_name_ssn_last4'
  | 'first_name_last_name_date_of_birth';
type Query = Record<string, string | number | undefined>;

const FLOWS: Record<Flow, string[]> = {
  phone_ssn_last4: ['phone', 'ssn_last4'],
  phone_date_of_birth: ['phone', 'date_of_birth'],
  phone_postal_code: ['phone', 'postal_code'],
  first_name_last_name_ssn_last4: ['first_name', 'last_name', 'ssn_last4'],
  first_name_last_name_date_of_birth: ['first_name', 'last_name', 'date_of_birth'],
};
const FLOW_NAMES = Object.keys(FLOWS) as Flow[];

/** Maria's details as a lookup would give them; each flow picks its fields. */
const MARIA = {
  phone: '5125550147',
  ssn_last4: '0427',
  date_of_birth: '1984-07-19',
  postal_code: '78704',
  first_name: 'Maria',
  last_name: 'Gonzalez',
};
const detailsFor = (flow: Flow, overrides: Query = {}): Query => ({
  lookup_flow_type: flow,
  ...Object.fromEntries(FLOWS[flow].map((field) => [field, MARIA[field as keyof typeof MARIA]])),
  ...overrides,
});

let app: TestApp;
let maria: { id: string };
/** Maria's accounts in creation order: a parent, its child (paid off), and a closed one. */
let mariaAccounts: string[] = [];

async function lookup(client: ApiClient, query: Query) {
  const { data, error, response } = await client.GET('/debt-accounts/lookup', { params: { query: query as never } });
  return { status: response.status, data: data as { data: DebtAccount[]; meta: components['schemas']['PaginationMeta']; links: components['schemas']['PaginationLinks'] } | undefined, error: error as ErrorBody | undefined };
}

/** The ids a successful lookup answers, in order. */
async function lookupIds(client: ApiClient, query: Query): Promise<string[]> {
  const result = await lookup(client, { limit: 100, ...query });
  if (result.status !== 200) throw new Error(`lookup failed: ${result.status} ${JSON.stringify(result.error)}`);
  expect(result.data!.meta.total).toBe(result.data!.data.length);
  return result.data!.data.map((account) => account.id);
}

/** RFC 3986 encoding: encodeURIComponent plus ! ' ( ) *, so a space is %20 and ( is %28. */
const strictEncode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The lookup by plain fetch, every query value strictly percent-encoded. */
async function rawLookup(query: Query, token = app.organization.production_token) {
  const params = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${strictEncode(String(v))}`)
    .join('&');
  const response = await fetch(`${app.baseUrl}/debt-accounts/lookup?${params}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as { data: DebtAccount[] } & ErrorBody };
}

async function newAccount(client: ApiClient, customerId: string, body: Partial<Schemas['DebtAccountCreate']> = {}): Promise<DebtAccount> {
  return newDebtAccount(client, customerId, { location_id: 'LOC-LOOKUP-01', ...body });
}

beforeAll(async () => {
  app = await startTestApp();
  maria = await newCustomer(app.api, {
    name: 'Maria Elena Gonzalez',
    phone: '(512) 555-0147',
    date_of_birth: '1984-07-19',
    ssn_last4: '0427',
    address: { line1: '1200 Barton Springs Rd', city: 'Austin', state: 'TX', postal_code: '78704' },
  });
  const second = await app.api.POST('/customers/{id}/addresses', { params: { path: { id: maria.id } }, body: { city: 'Austin', postal_code: '78701' } });
  expect(second.response.status).toBe(201);
  const parentExternalId = unique('ACC-PARENT');
  const parent = await newAccount(app.api, maria.id, { external_id: parentExternalId });
  const child = await newAccount(app.api, maria.id, { external_id: unique('ACC-CHILD'), parent_external_id: parentExternalId, status: 'paid_off' });
  const closed = await newAccount(app.api, maria.id, { external_id: unique('ACC-CLOSED'), status: 'closed' });
  mariaAccounts = [parent.id, child.id, closed.id];

  // Decoys, each with an account, each sharing only part of every flow's details with Maria.
  const decoys = [
    // Same phone (other notation); other name, SSN, date of birth and postal code.
    { name: 'Daniel Gonzalez', phone: '+1 512.555.0147', date_of_birth: '1990-02-03', ssn_last4: '9911', address: { postal_code: '10001' } },
    // Same names; other phone, SSN, date of birth and postal code.
    { name: 'maria GONZALEZ', phone: '(303) 555-0100', date_of_birth: '1979-11-30', ssn_last4: '1234', address: { postal_code: '78704' } },
    // Same SSN, date of birth and postal code; other phone and name.
    { name: 'Elena Maria', phone: '512-555-0148', date_of_birth: '1984-07-19', ssn_last4: '0427', address: { postal_code: '78704' } },
    // Same first name, SSN and date of birth, other last name; phone without the area code's match.
    { name: 'Maria Gonza', phone: '(512) 556-0147', date_of_birth: '1984-07-19', ssn_last4: '0427', address: { postal_code: '78701' } },
    // Same last name, SSN and date of birth, other first name.
    { name: 'Elena Gonzalez', phone: '(512) 555-1147', date_of_birth: '1984-07-19', ssn_last4: '0427', address: { postal_code: '78701' } },
  ];
  for (const decoy of decoys) {
    const customer = await newCustomer(app.api, decoy);
    await newAccount(app.api, customer.id);
  }
  // Some fifteen requests one after another: on a busy machine, more than the 30 s default.
}, 90_000);
afterAll(async () => app?.stop());

describe('GET /debt-accounts/lookup: each flow', () => {
  test.each(FLOW_NAMES)('%s: answers every account of the matching customer, oldest first, each with its customer', async (flow) => {
    const { status, data } = await lookup(app.api, detailsFor(flow));
    expect(status).toBe(200);
    expect(data!.data.map((account) => account.id)).toEqual(mariaAccounts);
    expect(data!.meta).toMatchObject({ total: 3, current_page: 1, from: 1, to: 3, last_page: 1 });
    for (const account of data!.data) {
      expect(account.customer).toEqual({ id: maria.id, external_id: null, name: 'Maria Elena Gonzalez', email: expect.any(String), phone: '(512) 555-0147' });
    }
    expect(data!.data.map((account) => account.status)).toEqual(['active', 'paid_off', 'closed']);
    expect(data!.data[1]!.parent_external_id).toBe(data!.data[0]!.external_id);
  });

  // For each field of each flow: Maria's details with that one field wrong. The decoys share
  // the other fields, so a flow that ignored the field would answer someone.
  const wrong: Record<string, string> = {
    phone: '512-555-0149',
    ssn_last4: '0428',
    date_of_birth: '1984-07-20',
    postal_code: '78705',
    first_name: 'Mario',
    last_name: 'Gonzales',
  };
  test.each(FLOW_NAMES.flatMap((flow) => FLOWS[flow].map((field) => [flow, field] as const)))(
    '%s: with a wrong %s, nobody matches',
    async (flow, field) => {
      expect(await lookupIds(app.api, detailsFor(flow, { [field]: wrong[field] }))).toEqual([]);
    },
  );

  test.each(FLOW_NAMES)('%s: a customer matching only some of the fields is not answered', async (flow) => {
    // Each decoy shares at least one of this flow's fields with Maria; only Maria's accounts come back.
    const ids = await lookupIds(app.api, detailsFor(flow));
    expect(ids).toEqual(mariaAccounts);
  });
});

describe('GET /debt-accounts/lookup: required fields', () => {
  test.each(FLOW_NAMES.flatMap((flow) => FLOWS[flow].map((field) => [flow, field] as const)))(
    '%s without %s answers 422 naming query.%s',
    async (flow, field) => {
      const { status, error } = await lookup(app.api, detailsFor(flow, { [field]: undefined }));
      expect(status).toBe(422);
      expectFieldError(error, `query.${field}`);
      expect(Object.keys(error!.errors!)).toEqual([`query.${field}`]);
    },
  );

  test.each(FLOW_NAMES)('%s with none of its fields names every missing one in one answer', async (flow) => {
    const { status, error } = await lookup(app.api, { lookup_flow_type: flow });
    expect(status).toBe(422);
    expect(Object.keys(error!.errors!).sort()).toEqual(FLOWS[flow].map((field) => `query.${field}`).sort());
  });

  test('fields of another flow do not stand in for the missing ones', async () => {
    const { status, error } = await lookup(app.api, { lookup_flow_type: 'phone_ssn_last4', phone: MARIA.phone, date_of_birth: MARIA.date_of_birth });
    expect(status).toBe(422);
    expect(Object.keys(error!.errors!)).toEqual(['query.ssn_last4']);
  });

  test('without lookup_flow_type, answers 422 on query.lookup_flow_type', async () => {
    const { status, error } = await lookup(app.api, { phone: MARIA.phone, ssn_last4: MARIA.ssn_last4 });
    expect(status).toBe(422);
    expectFieldError(error, 'query.lookup_flow_type');
  });

  test('with an unknown lookup_flow_type, answers 422 on query.lookup_flow_type', async () => {
    const { status, error } = await lookup(app.api, { lookup_flow_type: 'email_only', phone: MARIA.phone, ssn_last4: MARIA.ssn_last4 });
    expect(status).toBe(422);
    expectFieldError(error, 'query.lookup_flow_type');
  });

  test.each([
    ['a 4-digit postal_code', { lookup_flow_type: 'phone_postal_code', phone: MARIA.phone, postal_code: '7870' }, 'query.postal_code'],
    ['a 6-digit postal_code', { lookup_flow_type: 'phone_postal_code', phone: MARIA.phone, postal_code: '787040' }, 'query.postal_code'],
    ['a 5-digit ssn_last4', { lookup_flow_type: 'phone_ssn_last4', phone: MARIA.phone, ssn_last4: '10427' }, 'query.ssn_last4'],
    ['a non-digit ssn_last4', { lookup_flow_type: 'phone_ssn_last4', phone: MARIA.phone, ssn_last4: '04a7' }, 'query.ssn_last4'],
    ['a phone with letters', { lookup_flow_type: 'phone_ssn_last4', phone: '512-555-CALL', ssn_last4: '0427' }, 'query.phone'],
    ['a phone too short', { lookup_flow_type: 'phone_ssn_last4', phone: '555-0147', ssn_last4: '0427' }, 'query.phone'],
    ['an impossible date_of_birth', { lookup_flow_type: 'phone_date_of_birth', phone: MARIA.phone, date_of_birth: '1984-13-40' }, 'query.date_of_birth'],
    ['a date_of_birth as MM/DD/YYYY', { lookup_flow_type: 'phone_date_of_birth', phone: MARIA.phone, date_of_birth: '07/19/1984' }, 'query.date_of_birth'],
  ])('%s answers 422 naming the field', async (_label, query, field) => {
    const { status, error } = await lookup(app.api, query);
    expect(status).toBe(422);
    expectFieldError(error, field);
  });

  test.each([
    ['postal_code=123 on phone_ssn_last4', { ...detailsFor('phone_ssn_last4'), postal_code: '123' }, 'query.postal_code'],
    ['date_of_birth=1984-7-19 on phone_postal_code', { ...detailsFor('phone_postal_code'), date_of_birth: '1984-7-19' }, 'query.date_of_birth'],
    ['ssn_last4=12345 on first_name_last_name_date_of_birth', { ...detailsFor('first_name_last_name_date_of_birth'), ssn_last4: '12345' }, 'query.ssn_last4'],
    ['phone=abc on first_name_last_name_ssn_last4', { ...detailsFor('first_name_last_name_ssn_last4'), phone: 'abc' }, 'query.phone'],
    ['an empty first_name on phone_ssn_last4', { ...detailsFor('phone_ssn_last4'), first_name: '' }, 'query.first_name'],
  ])('a malformed unused parameter (%s) answers 422', async (_label, query, field) => {
    const { status, error } = await lookup(app.api, query);
    expect(status).toBe(422);
    expectFieldError(error, field);
  });

  test('well-formed unused parameters are ignored, even when they do not match', async () => {
    const ids = await lookupIds(app.api, { ...detailsFor('phone_ssn_last4'), postal_code: '99999', date_of_birth: '2000-01-01', first_name: 'Nobody', last_name: 'Else' });
    expect(ids).toEqual(mariaAccounts);
  });
});

describe('GET /debt-accounts/lookup: matching rules', () => {
  test.each([
    ['digits only', '5125550147'],
    ['+1 and spaces', '+1 512 555 0147'],
    ['+1 without separators', '+15125550147'],
    ['dots', '512.555.0147'],
    ['11 digits starting with 1', '15125550147'],
    ['1 and dashes', '1-512-555-0147'],
  ])('phone given with %s matches', async (_label, phone) => {
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { phone }))).toEqual(mariaAccounts);
  });

  // Parentheses and spaces percent-encoded (%28 %29 %20).
  test.each([
    ['the stored notation', '(512) 555-0147'],
    ['parentheses without a space', '(512)555-0147'],
    ['+1 and parentheses', '+1 (512) 555-0147'],
  ])('phone given with %s (percent-encoded) matches', async (_label, phone) => {
    const { status, body } = await rawLookup({ ...detailsFor('phone_ssn_last4', { phone }) });
    expect(status).toBe(200);
    expect(body.data.map((account: DebtAccount) => account.id)).toEqual(mariaAccounts);
  });

  // openapi-fetch leaves ( and ) unencoded in a query; the parameter allows reserved characters.
  test('the generated client can send the phone "(512) 555-0147" as the document shows it', async () => {
    const { status, error } = await lookup(app.api, detailsFor('phone_ssn_last4', { phone: '(512) 555-0147' }));
    expect(error).toBeUndefined();
    expect(status).toBe(200);
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { phone: '(512) 555-0147' }))).toEqual(mariaAccounts);
  });

  test('a phone differing in its last digit does not match', async () => {
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { phone: '512 555 0146' }))).toEqual([]);
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { phone: '+1 512 555 0146' }))).toEqual([]);
  });

  test('a customer stored as +1 512.555.0147 matches its 10 digits', async () => {
    const ids = await lookupIds(app.api, { lookup_flow_type: 'phone_ssn_last4', phone: '512-555-0147', ssn_last4: '9911' });
    expect(ids).toHaveLength(1);
    const { data } = await app.api.GET('/debt-accounts/{id}', { params: { path: { id: ids[0]! } } });
    expect(data!.data.customer!.name).toBe('Daniel Gonzalez');
  });

  test.each([
    ['maria', 'gonzalez'],
    ['MARIA', 'GONZALEZ'],
    ['mArIa', 'GonZaLeZ'],
  ])('first_name %s and last_name %s match "Maria Elena Gonzalez" case-insensitively', async (first_name, last_name) => {
    expect(await lookupIds(app.api, detailsFor('first_name_last_name_ssn_last4', { first_name, last_name }))).toEqual(mariaAccounts);
  });

  test.each([
    ['a middle name as last_name', 'Maria', 'Elena'],
    ['a middle name as first_name', 'Elena', 'Gonzalez'],
    ['a prefix of the last name', 'Maria', 'Gonza'],
    ['a prefix of the first name', 'Mar', 'Gonzalez'],
    ['first and middle name as first_name', 'Maria Elena', 'Gonzalez'],
    ['the whole name as last_name', 'Maria', 'Maria Elena Gonzalez'],
  ])('%s does not match', async (_label, first_name, last_name) => {
    // SSN 0427 is Maria's only: "Maria Gonza" and "Elena Gonzalez" share it but not these names.
    const ids = await lookupIds(app.api, detailsFor('first_name_last_name_ssn_last4', { first_name, last_name }));
    expect(ids.filter((id) => mariaAccounts.includes(id))).toEqual([]);
  });

  test('the decoy "Maria Gonza" is found by its own last word, and Maria is not', async () => {
    const ids = await lookupIds(app.api, detailsFor('first_name_last_name_ssn_last4', { last_name: 'gonza' }));
    expect(ids).toHaveLength(1);
    expect(mariaAccounts).not.toContain(ids[0]);
  });

  test.each([
    ['"0427"', '0427'],
    ['"427" (left-padded to 0427)', '427'],
  ])('ssn_last4 %s matches a customer created with "0427"', async (_label, ssn_last4) => {
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { ssn_last4 }))).toEqual(mariaAccounts);
  });

  test('ssn_last4 427 given as a number in the query matches', async () => {
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { ssn_last4: 427 }))).toEqual(mariaAccounts);
  });

  test('a customer created with an integer ssn_last4 427 matches "0427" and "427"', async () => {
    const customer = await newCustomer(app.api, { name: 'Ana Ruiz', phone: '(210) 555-0427', ssn_last4: 427 });
    const account = await newAccount(app.api, customer.id);
    for (const ssn_last4 of ['0427', '427']) {
      expect(await lookupIds(app.api, { lookup_flow_type: 'phone_ssn_last4', phone: '2105550427', ssn_last4 })).toEqual([account.id]);
    }
  });

  test.each([['27'], ['4270'], ['7']])('ssn_last4 %s does not match 0427', async (ssn_last4) => {
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4', { ssn_last4 }))).toEqual([]);
  });

  // Dates are checked to exist (ajv-formats' full mode), not only to look like dates.
  test.each([
    ['1984-02-30, used by the flow', detailsFor('phone_date_of_birth', { date_of_birth: '1984-02-30' })],
    ['1984-02-30, unused by the flow', detailsFor('phone_ssn_last4', { date_of_birth: '1984-02-30' })],
    ['1984-13-01, used by the flow', detailsFor('first_name_last_name_date_of_birth', { date_of_birth: '1984-13-01' })],
    ['1984-13-01, unused by the flow', detailsFor('phone_postal_code', { date_of_birth: '1984-13-01' })],
  ])('date_of_birth %s answers 422', async (_label, query) => {
    const { status, error } = await lookup(app.api, query);
    expect(status).toBe(422);
    expectFieldError(error, 'query.date_of_birth');
  });

  test.each([['1984-07-18'], ['1984-07-20'], ['1985-07-19']])('date_of_birth must be exact: %s does not match', async (date_of_birth) => {
    expect(await lookupIds(app.api, detailsFor('phone_date_of_birth', { date_of_birth }))).toEqual([]);
  });

  test.each([
    ['the first address', '78704'],
    ['the second address', '78701'],
  ])('postal_code of %s matches', async (_label, postal_code) => {
    expect(await lookupIds(app.api, detailsFor('phone_postal_code', { postal_code }))).toEqual(mariaAccounts);
  });

  test('a postal code on none of her addresses does not match, even if another customer has it', async () => {
    // 10001 is the address of "Daniel Gonzalez", who shares Maria's phone.
    const ids = await lookupIds(app.api, detailsFor('phone_postal_code', { postal_code: '10001' }));
    expect(ids).toHaveLength(1);
    expect(mariaAccounts).not.toContain(ids[0]);
    expect(await lookupIds(app.api, detailsFor('phone_postal_code', { postal_code: '78705' }))).toEqual([]);
  });

  test('every customer matching the details is answered, each with their own accounts', async () => {
    // Two customers share the phone 512-555-0147: Maria (0427) and Daniel (9911).
    const both = await lookupIds(app.api, { lookup_flow_type: 'phone_postal_code', phone: MARIA.phone, postal_code: '78704' });
    expect(both).toEqual(mariaAccounts);
    const twin = await newCustomer(app.api, { name: 'Maria Gonzalez', phone: '512 555 0147', ssn_last4: '0427' });
    const twinAccount = await newAccount(app.api, twin.id);
    const { data } = await lookup(app.api, detailsFor('phone_ssn_last4'));
    expect(data!.data.map((account) => account.id)).toEqual([...mariaAccounts, twinAccount.id]);
    expect(data!.data.map((account) => account.customer!.id)).toEqual([maria.id, maria.id, maria.id, twin.id]);
    await app.api.DELETE('/debt-accounts/{id}', { params: { path: { id: twinAccount.id } } });
    await app.api.DELETE('/customers/{id}', { params: { path: { id: twin.id } } });
    expect(await lookupIds(app.api, detailsFor('phone_ssn_last4'))).toEqual(mariaAccounts);
  });
});

describe('GET /debt-accounts/lookup: answers', () => {
  test('no match is 200 with an empty list and total 0', async () => {
    const { status, data } = await lookup(app.api, { lookup_flow_type: 'phone_ssn_last4', phone: '999-555-0000', ssn_last4: '0000' });
    expect(status).toBe(200);
    expect(data!.data).toEqual([]);
    expect(data!.meta).toMatchObject({ total: 0, from: null, to: null, current_page: 1, last_page: 1 });
    expect(data!.links.next).toBeNull();
  });

  test('a customer who matches but has no accounts gives an empty list', async () => {
    await newCustomer(app.api, { name: 'Noah Accountless', phone: '(415) 555-0100', ssn_last4: '5555' });
    const { status, data } = await lookup(app.api, { lookup_flow_type: 'phone_ssn_last4', phone: '4155550100', ssn_last4: '5555' });
    expect(status).toBe(200);
    expect(data!.data).toEqual([]);
    expect(data!.meta.total).toBe(0);
  });

  test('limit and page page through the accounts, and links keep the lookup parameters', async () => {
    const query = { ...detailsFor('phone_postal_code'), limit: 2 };
    const first = await lookup(app.api, query);
    expect(first.status).toBe(200);
    expect(first.data!.data.map((account) => account.id)).toEqual(mariaAccounts.slice(0, 2));
    expect(first.data!.meta).toMatchObject({ total: 3, per_page: 2, current_page: 1, last_page: 2, from: 1, to: 2 });
    expect(first.data!.links.prev).toBeNull();
    const next = new URL(first.data!.links.next!);
    expect(next.pathname).toMatch(/\/debt-accounts\/lookup$/);
    expect(Object.fromEntries(next.searchParams)).toEqual({
      lookup_flow_type: 'phone_postal_code',
      phone: MARIA.phone,
      postal_code: MARIA.postal_code,
      limit: '2',
      page: '2',
    });
    const last = new URL(first.data!.links.last!);
    expect(last.searchParams.get('page')).toBe('2');
    expect(last.searchParams.get('lookup_flow_type')).toBe('phone_postal_code');

    // Follow the link as given.
    const response = await fetch(next, { headers: { authorization: `Bearer ${app.organization.production_token}` } });
    expect(response.status).toBe(200);
    const second = (await response.json()) as { data: DebtAccount[]; meta: { from: number; to: number }; links: { prev: string; next: string | null } };
    expect(second.data.map((account) => account.id)).toEqual(mariaAccounts.slice(2));
    expect(second.meta).toMatchObject({ from: 3, to: 3 });
    expect(second.links.next).toBeNull();
    expect(new URL(second.links.prev).searchParams.get('phone')).toBe(MARIA.phone);
  });

  // Links encode a space as %20, so they can be followed as they are.
  test('links of a lookup by a phone with spaces can be followed', async () => {
    const first = await lookup(app.api, { ...detailsFor('phone_ssn_last4', { phone: '512 555 0147' }), limit: 2 });
    expect(first.status).toBe(200);
    const response = await fetch(first.data!.links.next!, { headers: { authorization: `Bearer ${app.organization.production_token}` } });
    expect(await response.json()).toMatchObject({ data: [{ id: mariaAccounts[2] }] });
    expect(response.status).toBe(200);
  });

  test('a page past the end is empty but keeps the total', async () => {
    const { status, data } = await lookup(app.api, { ...detailsFor('phone_ssn_last4'), limit: 2, page: 5 });
    expect(status).toBe(200);
    expect(data!.data).toEqual([]);
    expect(data!.meta.total).toBe(3);
  });

  test('by default each account embeds customer, location, locations and metadata', async () => {
    const { data } = await lookup(app.api, detailsFor('phone_ssn_last4'));
    for (const account of data!.data) {
      expect(account).toHaveProperty('customer');
      expect(account).toHaveProperty('location');
      expect(account).toHaveProperty('locations');
      expect(account).toHaveProperty('metadata');
    }
  });

  test('include= embeds nothing, not even the customer', async () => {
    const { status, data } = await lookup(app.api, { ...detailsFor('phone_ssn_last4'), include: '' });
    expect(status).toBe(200);
    expect(data!.data.map((account) => account.id)).toEqual(mariaAccounts);
    for (const account of data!.data) {
      for (const relation of ['customer', 'location', 'locations', 'metadata']) expect(account).not.toHaveProperty(relation);
    }
  });

  test('include=customer embeds only the customer', async () => {
    const { data } = await lookup(app.api, { ...detailsFor('first_name_last_name_date_of_birth'), include: 'customer' });
    expect(data!.data).toHaveLength(3);
    for (const account of data!.data) {
      expect(account.customer!.id).toBe(maria.id);
      for (const relation of ['location', 'locations', 'metadata']) expect(account).not.toHaveProperty(relation);
    }
  });

  test('include=location embeds the location and not the customer', async () => {
    const { data } = await lookup(app.api, { ...detailsFor('phone_date_of_birth'), include: 'location' });
    for (const account of data!.data) {
      expect(account).not.toHaveProperty('customer');
      expect(account.location).toMatchObject({ external_id: 'LOC-LOOKUP-01', name: 'Lakeside Medical Center' });
    }
  });

  test('an unknown include value answers 422 on query.include', async () => {
    const { status, error } = await lookup(app.api, { ...detailsFor('phone_ssn_last4'), include: 'customer,transactions' });
    expect(status).toBe(422);
    expectFieldError(error, 'query.include');
  });

  test('without a token, answers 401', async () => {
    const response = await fetch(`${app.baseUrl}/debt-accounts/lookup?lookup_flow_type=phone_ssn_last4&phone=5125550147&ssn_last4=0427`);
    expect(response.status).toBe(401);
  });
});

describe('GET /debt-accounts/lookup: isolation', () => {
  test.each(FLOW_NAMES)('%s: another organization and the sandbox see an empty list for matching details', async (flow) => {
    for (const client of [app.other, app.sandbox]) {
      const { status, data } = await lookup(client, detailsFor(flow));
      expect(status).toBe(200);
      expect(data!.data).toEqual([]);
      expect(data!.meta.total).toBe(0);
    }
  });

  test('a twin with the same details in another organization and in the sandbox stays apart', async () => {
    const twinDetails = {
      name: 'Maria Elena Gonzalez',
      phone: '(512) 555-0147',
      date_of_birth: '1984-07-19',
      ssn_last4: '0427',
      address: { postal_code: '78704' },
    };
    const seen: Record<string, string[]> = {};
    for (const [label, client] of [['other', app.other], ['sandbox', app.sandbox]] as const) {
      const twin = await newCustomer(client, twinDetails);
      seen[label] = [(await newAccount(client, twin.id)).id];
    }
    for (const flow of FLOW_NAMES) {
      expect(await lookupIds(app.api, detailsFor(flow))).toEqual(mariaAccounts);
      expect(await lookupIds(app.other, detailsFor(flow))).toEqual(seen.other);
      expect(await lookupIds(app.sandbox, detailsFor(flow))).toEqual(seen.sandbox);
    }
  });
});
