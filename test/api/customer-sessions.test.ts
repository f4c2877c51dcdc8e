import type { Schemas } from '../../client';
import { customerWithAccount as withAccount, expectFieldError, newCustomer, newSession, UNKNOWN_UUID, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

type Create = Schemas['CustomerSessionCreate'];
const HOUR = 3_600_000;
const DISPUTE = '4c8e2a71-5b3d-4f9e-8a16-0d7b9c2e3f54';

const customerWithAccount = () => withAccount(app.api);
const created = (body: Create) => newSession(app.api, body);

async function create(body: Create) {
  return app.api.POST('/customer-sessions', { body });
}

/** The page part of a portal_url: its path after `/portal/s/<token>`. */
function page(portalUrl: string): string {
  return new URL(portalUrl).pathname.replace(/^\/portal\/s\/[^/]+/, '');
}

describe('POST /customer-sessions', () => {
  test('answers the session: portal_url on PORTAL_URL with a 43-character token, urls as given, a short_url, valid_till', async () => {
    const { customer, account } = await customerWithAccount();
    const session = await created({
      customer_id: customer.external_id!,
      debt_account_id: account.external_id!,
      destination: 'account_checkout',
      valid_until: 72,
      return_url: 'https://www.acme-recovery.example/payment/thank-you',
      expiration_return_url: 'https://www.acme-recovery.example/payment/link-expired',
      short_link: true,
    });
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    const url = new URL(session.portal_url);
    expect(`${url.origin}/portal`).toBe(app.config.portalUrl);
    expect(url.pathname).toMatch(new RegExp(`^/portal/s/[A-Za-z0-9_-]{43}/accounts/${account.id}/checkout$`));
    expect(session.return_url).toBe('https://www.acme-recovery.example/payment/thank-you');
    expect(session.expiration_return_url).toBe('https://www.acme-recovery.example/payment/link-expired');
    expect(session.short_url).toMatch(new RegExp(`^${app.config.shortLinkBaseUrl}/[A-Za-z0-9]{12}$`));
    expect(session.valid_till).toBe(new Date(app.clock.now().getTime() + 72 * HOUR).toISOString());
  });

  test('by default: no short_url, null urls, and valid_till 24 hours from now (sliding)', async () => {
    const { customer } = await customerWithAccount();
    const session = await created({ customer_id: customer.id });
    expect(session).toMatchObject({ return_url: null, expiration_return_url: null, short_url: null });
    expect(session.valid_till).toBe(new Date(app.clock.now().getTime() + 24 * HOUR).toISOString());
    expect((await created({ customer_id: customer.id, short_link: false })).short_url).toBeNull();
  });

  test('every session has its own token and short code', async () => {
    const { customer } = await customerWithAccount();
    const sessions = await Promise.all(Array.from({ length: 5 }, () => created({ customer_id: customer.id, short_link: true })));
    expect(new Set(sessions.map((s) => new URL(s.portal_url).pathname)).size).toBe(5);
    expect(new Set(sessions.map((s) => s.short_url)).size).toBe(5);
  });

  test('the token is stored only as its SHA-256 hash and sealed, never in clear', async () => {
    const { customer } = await customerWithAccount();
    const session = await created({ customer_id: customer.id });
    const token = new URL(session.portal_url).pathname.split('/')[3]!;
    const row = await app.db('customer_sessions').where({ id: session.id }).first();
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_sealed).toMatch(/^v1\./);
  });
});

describe('valid_until and is_valid_forever', () => {
  test.each([
    [1, 201],
    [2160, 201],
    [0, 422],
    [2161, 422],
    [-1, 422],
    [1.5, 422],
  ])('valid_until %p answers %p', async (hours, status) => {
    const { customer } = await customerWithAccount();
    const { data, response, error } = await create({ customer_id: customer.id, valid_until: hours });
    expect(response.status).toBe(status);
    if (status === 201) expect(data!.data.valid_till).toBe(new Date(app.clock.now().getTime() + hours * HOUR).toISOString());
    else expectFieldError(error, 'valid_until');
  });

  test('is_valid_forever: valid_till is null; with valid_until it is a 422 on valid_until; false is the default', async () => {
    const { customer } = await customerWithAccount();
    expect((await created({ customer_id: customer.id, is_valid_forever: true })).valid_till).toBeNull();
    const both = await create({ customer_id: customer.id, is_valid_forever: true, valid_until: 24 });
    expect(both.response.status).toBe(422);
    expectFieldError(both.error, 'valid_until');
    const notForever = await created({ customer_id: customer.id, is_valid_forever: false, valid_until: 5 });
    expect(notForever.valid_till).toBe(new Date(app.clock.now().getTime() + 5 * HOUR).toISOString());
  });
});

describe('customer_id, debt_account_id and debt_account_dispute_id', () => {
  test('customer and account are found by UUID or external_id', async () => {
    const { customer, account } = await customerWithAccount();
    for (const [customerKey, accountKey] of [
      [customer.id, account.id],
      [customer.external_id!, account.external_id!],
    ]) {
      const session = await created({ customer_id: customerKey!, debt_account_id: accountKey! });
      expect(page(session.portal_url)).toBe(`/accounts/${account.id}`);
    }
  });

  test('an unknown customer answers 422 on customer_id, and nothing is stored', async () => {
    const before = await app.db('customer_sessions').count<{ count: string }[]>({ count: '*' });
    for (const key of ['NO-SUCH-CUSTOMER', UNKNOWN_UUID]) {
      const { response, error } = await create({ customer_id: key });
      expect(response.status).toBe(422);
      expectFieldError(error, 'customer_id');
    }
    expect(await app.db('customer_sessions').count<{ count: string }[]>({ count: '*' })).toEqual(before);
  });

  test('an unknown account, or one of another customer, answers 422 on debt_account_id', async () => {
    const { customer } = await customerWithAccount();
    const { account: othersAccount } = await customerWithAccount();
    for (const key of ['NO-SUCH-ACCOUNT', UNKNOWN_UUID, othersAccount.id, othersAccount.external_id!]) {
      const { response, error } = await create({ customer_id: customer.id, debt_account_id: key });
      expect(response.status).toBe(422);
      expectFieldError(error, 'debt_account_id');
    }
  });

  test('another organization’s or environment’s customer or account is unknown here: 422 (the document’s word, not 404)', async () => {
    const { customer, account } = await customerWithAccount();
    for (const outsider of [app.other, app.sandbox]) {
      for (const key of [customer.id, customer.external_id!]) {
        const { response, error } = await outsider.POST('/customer-sessions', { body: { customer_id: key } });
        expect(response.status).toBe(422);
        expectFieldError(error, 'customer_id');
      }
      const own = await newCustomer(outsider, { external_id: unique('CUST') });
      for (const key of [account.id, account.external_id!]) {
        const { response, error } = await outsider.POST('/customer-sessions', { body: { customer_id: own.id, debt_account_id: key } });
        expect(response.status).toBe(422);
        expectFieldError(error, 'debt_account_id');
      }
    }
  });

  test('debt_account_dispute_id: any well-formed UUID is taken as given (not verified); a malformed one is a 422', async () => {
    const { customer } = await customerWithAccount();
    const session = await created({ customer_id: customer.id, debt_account_dispute_id: DISPUTE });
    expect(page(session.portal_url)).toBe(`/disputes/${DISPUTE}`);
    const malformed = await create({ customer_id: customer.id, debt_account_dispute_id: 'DSP-1' });
    expect(malformed.response.status).toBe(422);
    expectFieldError(malformed.error, 'debt_account_dispute_id');
  });

  test('debt_account_id with debt_account_dispute_id answers 422 on debt_account_dispute_id', async () => {
    const { customer, account } = await customerWithAccount();
    const { response, error } = await create({ customer_id: customer.id, debt_account_id: account.id, debt_account_dispute_id: DISPUTE });
    expect(response.status).toBe(422);
    expectFieldError(error, 'debt_account_dispute_id');
  });

  test('a missing customer_id, an unknown field or a relative return_url answers 422 on that field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'customer_id'],
      [{ customer_id: 'C', validUntil: 5 }, 'validUntil'],
      [{ customer_id: 'C', return_url: '/thank-you' }, 'return_url'],
      [{ customer_id: 'C', expiration_return_url: 'ftp://files.example/expired' }, 'expiration_return_url'],
    ];
    for (const [body, key] of cases) {
      const { response, error } = await create(body as Create);
      expect(response.status).toBe(422);
      expectFieldError(error, key);
    }
  });
});

describe('destination', () => {
  const DESTINATIONS = ['accounts_list', 'account_checkout', 'account_detail', 'account_documents', 'account_disputes_detail'] as const;
  type Ids = 'customer' | 'account' | 'dispute';
  const allowed: Record<Ids, readonly string[]> = {
    customer: ['accounts_list'],
    account: ['accounts_list', 'account_checkout', 'account_detail', 'account_documents'],
    dispute: ['account_disputes_detail'],
  };
  const cases = (['customer', 'account', 'dispute'] as Ids[]).flatMap((ids) => DESTINATIONS.map((destination) => [ids, destination] as const));

  test.each(cases)('with the %s id(s), %s is allowed only where the spec pairs them', async (ids, destination) => {
    const { customer, account } = await customerWithAccount();
    const body: Create = { customer_id: customer.id, destination };
    if (ids === 'account') body.debt_account_id = account.id;
    if (ids === 'dispute') body.debt_account_dispute_id = DISPUTE;
    const { data, response, error } = await create(body);
    if (!allowed[ids].includes(destination)) {
      expect(response.status).toBe(422);
      expectFieldError(error, 'destination');
      return;
    }
    expect(response.status).toBe(201);
    const expected = {
      accounts_list: '/accounts',
      account_detail: `/accounts/${account.id}`,
      account_checkout: `/accounts/${account.id}/checkout`,
      account_documents: `/accounts/${account.id}/documents`,
      account_disputes_detail: `/disputes/${DISPUTE}`,
    }[destination];
    expect(page(data!.data.portal_url)).toBe(expected);
  });

  test('when absent: the dispute page with a dispute, the account page with an account, else the accounts list', async () => {
    const { customer, account } = await customerWithAccount();
    expect(page((await created({ customer_id: customer.id })).portal_url)).toBe('/accounts');
    expect(page((await created({ customer_id: customer.id, debt_account_id: account.id })).portal_url)).toBe(`/accounts/${account.id}`);
    expect(page((await created({ customer_id: customer.id, debt_account_dispute_id: DISPUTE })).portal_url)).toBe(`/disputes/${DISPUTE}`);
  });

  test('an unknown destination answers 422', async () => {
    const { customer } = await customerWithAccount();
    const { response, error } = await create({ customer_id: customer.id, destination: 'payment_page' as never });
    expect(response.status).toBe(422);
    expectFieldError(error, 'destination');
  });
});

describe('tags', () => {
  test('utm_source (the organization) comes first, then the tags in request order; values survive URL parsing exactly', async () => {
    const { customer } = await customerWithAccount();
    const tags = [
      { name: 'utm_campaign', value: 'fall reminder & more = 50% off?' },
      { name: 'utm_medium', value: 'e-mail/letter #2' },
      { name: 'utm_content', value: 'Zahlung fällig – 支払い 💳' },
      { name: 'utm_id', value: '+plus+ %20 not-decoded' },
    ] as const;
    const session = await created({ customer_id: customer.id, tags: [...tags] });
    const params = [...new URL(session.portal_url).searchParams.entries()];
    expect(params).toEqual([['utm_source', app.organization.organization_id], ...tags.map((tag) => [tag.name, tag.value])]);
    expect(new URL(session.portal_url).search).toContain('utm_campaign=fall+reminder+%26+more+%3D+50%25+off%3F');
  });

  test('without tags, utm_source alone', async () => {
    const { customer } = await customerWithAccount();
    const session = await created({ customer_id: customer.id });
    expect(new URL(session.portal_url).search).toBe(`?utm_source=${app.organization.organization_id}`);
  });

  test.each([
    ['utm_source, which the service sets', [{ name: 'utm_source', value: 'x' }], 'tags[0].name'],
    ['an unknown name', [{ name: 'ref', value: 'x' }], 'tags[0].name'],
    ['an empty value', [{ name: 'utm_medium', value: '' }], 'tags[0].value'],
    ['a value of 256 characters', [{ name: 'utm_medium', value: 'v'.repeat(256) }], 'tags[0].value'],
    ['a name given twice', [{ name: 'utm_medium', value: 'a' }, { name: 'utm_medium', value: 'b' }], 'tags'],
    [
      'five tags',
      ['utm_medium', 'utm_campaign', 'utm_content', 'utm_id', 'utm_medium'].map((name) => ({ name, value: 'x' })),
      'tags',
    ],
  ])('%s answers 422', async (_label, tags, key) => {
    const { customer } = await customerWithAccount();
    const { response, error } = await create({ customer_id: customer.id, tags: tags as Create['tags'] });
    expect(response.status).toBe(422);
    expectFieldError(error, key);
  });

  test('a value of 255 characters is accepted', async () => {
    const { customer } = await customerWithAccount();
    const session = await created({ customer_id: customer.id, tags: [{ name: 'utm_medium', value: 'v'.repeat(255) }] });
    expect(new URL(session.portal_url).searchParams.get('utm_medium')).toBe('v'.repeat(255));
  });
});
