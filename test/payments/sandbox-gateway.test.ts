/**
 * The sandbox gateway against real PostgreSQL: every test card and ACH account the document
 * lists answers as documented, and its vault never holds a number in the clear.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { loadConfig } from '../../server/kernel/config';
import { SecretBox } from '../../server/crypto/secrets';
import { connect } from '../../server/db/database';
import type { Tenant } from '../../server/kernel/tenant';
import { GatewayRefusal, GatewayUnanswered, type PaymentGateway } from '../../server/gateway/gateway';
import { gatewayFor, requireGateway } from '../../server/gateway/gateways';
import { jittered, sandboxGateway } from '../../server/gateway/sandbox-gateway';
import { createOrganization } from '../../server/organizations/organization-repo';
import { createTestDatabase } from '../support/test-app';

let db: Knex;
let drop: () => Promise<void>;
let gateway: PaymentGateway;
let tenant: Tenant;
const secrets = new SecretBox(randomBytes(32));

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = connect(database.url, 2);
  const organization = await createOrganization(db, 'Acme Recovery LLC');
  tenant = { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: 'x' };
  gateway = sandboxGateway(db, tenant, secrets, { achSettlementSeconds: 172_800 });
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

/** A fresh idempotency key, as a charge's id is. */
const key = () => randomUUID();
const card = (number: string) => gateway.tokenizeCard({ number, expMonth: 8, expYear: 2031 });
const bank = (accountNumber: string) => gateway.tokenizeBankAccount({ routingNumber: '110000000', accountNumber });

describe('sandbox cards', () => {
  test.each(['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117', '4111111111111111'])(
    'card %s succeeds at once',
    async (number) => {
      const outcome = await gateway.charge(await card(number), 1500, key());
      expect(outcome.status).toBe('succeeded');
      expect(outcome.reference).toMatch(/^pay_/);
    },
  );

  test.each([
    ['4000000000000002', 'card_declined'],
    ['4000000000009995', 'insufficient_funds'],
    ['4000000000000069', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error'],
  ])('card %s is declined with %s', async (number, code) => {
    const outcome = await gateway.charge(await card(number), 1500, key());
    expect(outcome).toMatchObject({ status: 'failed', code });
  });
});

describe('sandbox bank accounts', () => {
  test.each([
    ['000123456789', undefined],
    ['000999999991', undefined],
    ['000222222227', 'R01'],
    ['000111111113', 'R02'],
    ['000111111116', 'R03'],
    ['000333333335', 'R10'],
  ])('account %s is pending for the settlement time, then %s', async (account, code) => {
    const outcome = await gateway.charge(await bank(account), 9900, key());
    expect(outcome).toMatchObject({ status: 'pending', checkAfterSeconds: 172_800 });
    const later = await gateway.outcome(outcome.reference);
    expect(later).toEqual(code ? expect.objectContaining({ status: 'returned', code }) : { status: 'settled' });
    // A retried settlement job is told the same.
    expect(await gateway.outcome(outcome.reference)).toEqual(later);
  });
});

describe('void and refund', () => {
  test('a succeeded card payment can be voided once, then neither voided nor refunded', async () => {
    const { reference } = await gateway.charge(await card('4242424242424242'), 1000, key());
    await gateway.void(reference, key());
    await expect(gateway.void(reference, key())).rejects.toBeInstanceOf(GatewayRefusal);
    await expect(gateway.refund(reference, 100, key())).rejects.toBeInstanceOf(GatewayRefusal);
  });

  test('refunds add up to the amount and no further; a declined payment is not refundable', async () => {
    const { reference } = await gateway.charge(await card('4242424242424242'), 1000, key());
    await gateway.refund(reference, 400, key());
    await gateway.refund(reference, 600, key());
    await expect(gateway.refund(reference, 1, key())).rejects.toBeInstanceOf(GatewayRefusal);
    const declined = await gateway.charge(await card('4000000000000002'), 1000, key());
    await expect(gateway.refund(declined.reference, 1, key())).rejects.toBeInstanceOf(GatewayRefusal);
  });

  test('a pending ACH debit can be voided; once settled it is refunded instead', async () => {
    const pending = await gateway.charge(await bank('000123456789'), 1000, key());
    await gateway.void(pending.reference, key());
    const settled = await gateway.charge(await bank('000123456789'), 1000, key());
    await gateway.outcome(settled.reference);
    await expect(gateway.void(settled.reference, key())).rejects.toBeInstanceOf(GatewayRefusal);
    await gateway.refund(settled.reference, 1000, key());
  });
});

describe('idempotency keys, find() and faults', () => {
  test('a repeat of a charge with its key is the same request: one payment, the same answer, also when sent at once', async () => {
    const token = await card('4242424242424242');
    const charge = key();
    const answers = await Promise.all([gateway.charge(token, 2500, charge), gateway.charge(token, 2500, charge), gateway.charge(token, 2500, charge)]);
    expect(new Set(answers.map((answer) => answer.reference)).size).toBe(1);
    expect(await db('sandbox_payments').where({ token })).toHaveLength(1);
    expect(await gateway.find(charge)).toEqual(answers[0]);
  });

  test('many charges at once, of two tenants, some repeated: each key is paid once and answered its own outcome', async () => {
    const organization = await createOrganization(db, 'Other Agency LLC');
    const other = sandboxGateway(db, { organizationId: organization.organization_id, environment: 'sandbox', tokenHash: 'y' }, secrets, { achSettlementSeconds: 172_800 });
    const [good, declined, theirs] = [await card('4242424242424242'), await card('4000000000000002'), await other.tokenizeCard({ number: '4242424242424242', expMonth: 8, expYear: 2031 })];
    const asked = [
      ...Array.from({ length: 6 }, (_, index) => ({ gateway, token: index % 2 ? declined : good, amount: 100 + index, key: key() })),
      ...Array.from({ length: 3 }, (_, index) => ({ gateway: other, token: theirs, amount: 200 + index, key: key() })),
    ];
    const answers = await Promise.all([...asked, asked[0]!, asked[7]!].map((each) => each.gateway.charge(each.token, each.amount, each.key)));
    expect(answers.slice(0, 9).map((answer) => answer.status)).toEqual(['succeeded', 'failed', 'succeeded', 'failed', 'succeeded', 'failed', 'succeeded', 'succeeded', 'succeeded']);
    expect(answers[9]).toEqual(answers[0]);
    expect(answers[10]).toEqual(answers[7]);
    const payments = await db('sandbox_payments').whereIn('reference', answers.map((answer) => answer.reference)).select('reference', 'amount', 'organization_id');
    expect(payments).toHaveLength(9);
    for (const [index, each] of asked.entries()) {
      expect(payments.find((payment) => payment.reference === answers[index]!.reference)).toMatchObject({ amount: String(each.amount), organization_id: index < 6 ? tenant.organizationId : organization.organization_id });
    }
  });

  test('find() of a key never received says so, and the key is spent: a charge arriving later with it takes no money', async () => {
    const token = await card('4242424242424242');
    const charge = key();
    expect(await gateway.find(charge)).toBeUndefined();
    const late = await gateway.charge(token, 2500, charge);
    expect(late).toMatchObject({ status: 'failed', code: 'processing_error' });
    expect(await db('sandbox_payments').where({ token })).toHaveLength(0);
    expect(await gateway.find(charge)).toBeUndefined();
  });

  test('a declined charge is found declined', async () => {
    const charge = key();
    await gateway.charge(await card('4000000000000002'), 700, charge);
    expect(await gateway.find(charge)).toMatchObject({ status: 'failed', code: 'card_declined' });
  });

  test('the same void or refund sent twice happens once', async () => {
    const { reference } = await gateway.charge(await card('4242424242424242'), 1000, key());
    const refund = key();
    await gateway.refund(reference, 600, refund);
    await gateway.refund(reference, 600, refund);
    expect(await db('sandbox_payments').where({ reference }).first('refunded_amount')).toEqual({ refunded_amount: '600' });
    const voided = await gateway.charge(await card('4242424242424242'), 1000, key());
    const voidKey = key();
    await gateway.void(voided.reference, voidKey);
    await gateway.void(voided.reference, voidKey);
    await expect(gateway.void(voided.reference, key())).rejects.toBeInstanceOf(GatewayRefusal);
  });

  test('the test-only fault makes the charge and loses its answer; find() tells what became of it', async () => {
    const lossy = sandboxGateway(db, tenant, secrets, { achSettlementSeconds: 1, loseAnswerOfCents: 1313 });
    const token = await card('4242424242424242');
    const charge = key();
    await expect(lossy.charge(token, 1313, charge)).rejects.toBeInstanceOf(GatewayUnanswered);
    expect(await lossy.find(charge)).toMatchObject({ status: 'succeeded' });
    expect(await db('sandbox_payments').where({ token })).toHaveLength(1);
    expect(await lossy.charge(token, 1400, key())).toMatchObject({ status: 'succeeded' });
  });

  test('it is never handed a transaction of ours', async () => {
    await db.transaction(async (trx) => {
      expect(() => sandboxGateway(trx, tenant, secrets, { achSettlementSeconds: 1 })).toThrow(/outside our transactions/);
    });
  });

  test('latency: a median with jitter, none by default', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const draws = Array.from({ length: 2001 }, () => jittered(300, random)).sort((a, b) => a - b);
    expect(draws[1000]).toBeGreaterThanOrEqual(280);
    expect(draws[1000]).toBeLessThanOrEqual(320);
    expect(draws[0]).toBeLessThan(draws[2000]!);
    expect(jittered(0)).toBe(0);
    expect(loadConfig({}).sandboxGatewayLatencyMs).toBe(0);
    expect(loadConfig({ SANDBOX_GATEWAY_LATENCY_MS: '300' }).sandboxGatewayLatencyMs).toBe(300);
    expect(() => loadConfig({ SANDBOX_GATEWAY_LATENCY_MS: '-1' })).toThrow(/SANDBOX_GATEWAY_LATENCY_MS/);
    expect(() => loadConfig({ SANDBOX_GATEWAY_LATENCY_MS: '60001' })).toThrow(/SANDBOX_GATEWAY_LATENCY_MS/);
  });
});

describe('the vault', () => {
  test('keeps numbers sealed, never in the clear, and another tenant cannot use a token', async () => {
    const token = await card('4000000000009995');
    const bankToken = await bank('000222222227');
    const rows = await db('sandbox_vault').whereIn('token', [token, bankToken]);
    const text = JSON.stringify(rows);
    expect(text).not.toContain('4000000000009995');
    expect(text).not.toContain('000222222227');
    expect(text).not.toContain('110000000');
    const other = sandboxGateway(db, { ...tenant, environment: 'production' }, secrets, { achSettlementSeconds: 1 });
    await expect(other.charge(token, 100, key())).rejects.toBeInstanceOf(GatewayRefusal);
  });
});

describe('which gateway', () => {
  const deps = (env: NodeJS.ProcessEnv) => ({ db, secrets, config: loadConfig(env) });
  const production = (): Tenant => ({ ...tenant, environment: 'production' });

  test('sandbox simulates when no processor is configured; production only when PAYMENT_GATEWAY=sandbox', async () => {
    expect((await gatewayFor(deps({}), tenant))?.name).toBe('sandbox');
    expect(await gatewayFor(deps({}), production())).toBeUndefined();
    expect((await gatewayFor(deps({ PAYMENT_GATEWAY: 'sandbox' }), production()))?.name).toBe('sandbox');
    await expect(requireGateway(deps({}), production())).rejects.toMatchObject({ errorCode: 'processor_not_configured', status: 409 });
  });

  test('config: PAYMENT_GATEWAY is checked, SANDBOX_ACH_SETTLEMENT_SECONDS defaults to two days', () => {
    expect(() => loadConfig({ PAYMENT_GATEWAY: 'stripe' })).toThrow(/PAYMENT_GATEWAY/);
    expect(loadConfig({}).sandboxAchSettlementSeconds).toBe(172_800);
    expect(loadConfig({ SANDBOX_ACH_SETTLEMENT_SECONDS: '60' }).sandboxAchSettlementSeconds).toBe(60);
    expect(() => loadConfig({ SANDBOX_ACH_SETTLEMENT_SECONDS: '-1' })).toThrow(/SANDBOX_ACH_SETTLEMENT_SECONDS/);
  });
});
