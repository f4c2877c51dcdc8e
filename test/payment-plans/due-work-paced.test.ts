/**
 * The due work at a processor's pace, on the real database, through the real due-work flow,
 * plan runner, payments, pace (PostgreSQL) and the sandbox gateway behind the paced wrapper:
 * - 60 instalments due at once, 64 in flight allowed, the processor paced at 10/s: the flow
 *   slows to the pace instead of reserving them all at once (when each request reaches the
 *   processor, at most 20 charges are reserved and not yet sent, against 59 without the pace's
 *   room), no second
 *   has more than 10 requests, and each instalment is charged exactly once;
 * - a processor that keeps answering 429: the instalment's charge stays `processing` (asked
 *   again by recovery), the attempt started, never failed by our guess.
 */
import type { Knex } from 'knex';
import { createOrganization } from '../../server/organizations/organization-repo';
import { gatewayFor } from '../../server/gateway/gateways';
import { GatewayRateLimited, type PaymentGateway } from '../../server/gateway/gateway';
import { pacedGateway } from '../../server/gateway/paced-gateway';
import { processorPace } from '../../server/gateway/processor-pace';
import type { Tenant } from '../../server/kernel/tenant';
import { runDueNow } from '../../server/payment-plans/due-work';
import { planPorts } from '../../server/payment-plans/plan-charges';
import { startTestApp, type TestApp } from '../support/test-app';
import { seedDuePlans } from '../support/due-plans';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.stop());

const newTenant = async (name: string): Promise<Tenant> => ({ organizationId: (await createOrganization(app.db, name)).organization_id, environment: 'sandbox', tokenHash: '' });

const charges = (db: Knex, tenant: Tenant) => db('charges').where({ organization_id: tenant.organizationId });

test('60 instalments due, 64 in flight allowed, the processor at 10/s: never more than 20 charges reserved and waiting to be sent (59 without the room), no second over 10, each charged once', async () => {
  const tenant = await newTenant('Paced Agency');
  await seedDuePlans(app.deps, app.db, tenant, 'PACED', 60);
  const pace = processorPace(app.db, 'processor-config:due-work-paced-test', 10);
  /** The charges the processor received (our keys), and at each: the second it came in, and how many charges were reserved then and not yet sent to it. */
  const sent = new Set<string>();
  const received: { second: number; waiting: number }[] = [];
  const counting = (gateway: PaymentGateway): PaymentGateway => ({
    ...gateway,
    charge: async (token, amount, key) => {
      const second = Math.floor(Date.now() / 1000);
      sent.add(key);
      const reserved: string[] = await charges(app.db, tenant).where({ status: 'processing' }).pluck('id');
      received.push({ second, waiting: reserved.filter((id) => !sent.has(id)).length });
      return gateway.charge(token, amount, key);
    },
  });
  const ports = planPorts(app.deps, async (deps, of) => pacedGateway(counting((await gatewayFor(deps, of))!), pace));
  // The test app's clock stands still; the instalments are due on the real one.
  const done = await runDueNow({ ...app.deps, clock: () => new Date() }, { ...ports, others: [] }, 64);

  expect(done).toBe(60);
  expect(received).toHaveLength(60);
  // Admitted ahead: what keeps the pace busy while they are reserved (at most 1.5 s of it) and half
  // a second of it waiting for slots; at most 20, never the 59 the flow's width would reserve.
  expect(Math.max(...received.map((each) => each.waiting))).toBeLessThanOrEqual(20);
  const perSecond = new Map<number, number>();
  for (const { second } of received) perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
  expect([...perSecond.values()].filter((n) => n > 10)).toEqual([]);
  const made = await charges(app.db, tenant).groupBy('status').select('status').count('* as n');
  expect(made).toEqual([{ status: 'succeeded', n: '60' }]);
  const instalments = await app.db('payment_plan_charges').where({ organization_id: tenant.organizationId }).groupBy('status', 'attempts').select('status', 'attempts').count('* as n');
  expect(instalments).toEqual([{ status: 'succeeded', attempts: 1, n: '60' }]);
}, 120_000);

test("a processor that keeps answering 429: the instalment's charge stays processing for recovery, its attempt started, not failed", async () => {
  const tenant = await newTenant('Throttled Agency');
  await seedDuePlans(app.deps, app.db, tenant, 'THROTTLED', 1);
  const pace = processorPace(app.db, 'processor-config:due-work-throttled-test', 50);
  let refused = 0;
  const throttled = (gateway: PaymentGateway): PaymentGateway => ({
    ...gateway,
    charge: async () => {
      refused += 1;
      throw new GatewayRateLimited('Too many requests');
    },
  });
  const ports = planPorts(app.deps, async (deps, of) => pacedGateway(throttled((await gatewayFor(deps, of))!), pace, { maxWaitMs: 400, baseBackoffMs: 20, maxBackoffMs: 100 }));
  await runDueNow({ ...app.deps, clock: () => new Date() }, { ...ports, others: [] }, 4);

  expect(refused).toBeGreaterThan(1);
  expect(await charges(app.db, tenant).select('status', 'error_code')).toEqual([{ status: 'processing', error_code: null }]);
  expect(await app.db('payment_plan_charge_attempts').where({ organization_id: tenant.organizationId }).select('outcome')).toEqual([{ outcome: 'started' }]);
  expect(await app.db('payment_plan_charges').where({ organization_id: tenant.organizationId }).select('status')).toEqual([{ status: 'pending' }]);
}, 120_000);
