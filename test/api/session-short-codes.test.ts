/** Short codes: their form, and a collision retried without spoiling the caller's transaction. */
import { hashToken } from '../../server/crypto/secrets';
import { newCustomerSessionToken, newShortCode } from '../../server/customer-sessions/customer-session-links';
import { customerSessionRepo, type CustomerSessionValues } from '../../server/customer-sessions/customer-session-repo';
import { newCustomer, unique } from '../support/fixtures';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const HOUR = 3_600_000;

describe('short codes', () => {
  test('are 12 letters and digits, drawn afresh each time', () => {
    const codes = Array.from({ length: 2000 }, () => newShortCode());
    for (const code of codes) expect(code).toMatch(/^[A-Za-z0-9]{12}$/);
    expect(new Set(codes).size).toBe(codes.length);
    // Every letter of the alphabet turns up: no letter is left out by the sampling.
    expect(new Set(codes.join('')).size).toBe(62);
  });

  test('a code already taken is replaced by a new one, inside the caller’s transaction', async () => {
    const customer = await newCustomer(app.api, { external_id: unique('CUST') });
    const { data } = await app.api.POST('/customer-sessions', { body: { customer_id: customer.id, short_link: true } });
    const taken = new URL(data!.data.short_url!).pathname.split('/').pop()!;
    const tenant = { organizationId: app.organization.organization_id, environment: 'production' as const, tokenHash: '' };
    const values = (): CustomerSessionValues => {
      const token = newCustomerSessionToken();
      return {
        customer_id: customer.id,
        debt_account_id: null,
        debt_account_dispute_id: null,
        destination: 'accounts_list',
        tags: [],
        return_url: null,
        expiration_return_url: null,
        verification: false,
        token_hash: hashToken(token),
        token_sealed: 'v1.sealed',
        valid_until_hours: null,
        is_valid_forever: false,
        expires_at: new Date(app.clock.now().getTime() + 24 * HOUR),
        created_at: app.clock.now(),
      };
    };
    const offered: string[] = [];
    const codes = (...sequence: string[]) => () => {
      const code = sequence.shift() ?? newShortCode();
      offered.push(code);
      return code;
    };
    const rows = await app.db.transaction(async (trx) => {
      const first = await customerSessionRepo(trx, tenant).insert(values(), codes(taken, taken, 'Fresh0Code01'));
      // The transaction is still usable after the collisions.
      const second = await customerSessionRepo(trx, tenant).insert(values(), codes('Fresh0Code02'));
      return [first, second];
    });
    expect(offered).toEqual([taken, taken, 'Fresh0Code01', 'Fresh0Code02']);
    expect(rows.map((row) => row.short_code)).toEqual(['Fresh0Code01', 'Fresh0Code02']);
    await expect(customerSessionRepo(app.db, tenant).insert(values(), codes(taken, taken, taken, taken, taken))).rejects.toMatchObject({ code: '23505' });
  });
});
