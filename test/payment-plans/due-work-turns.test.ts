/**
 * Due work at scale, without a database: at most `width` items in flight at once, a lane's items
 * one after another in order, and the tenants' lanes taken in turn (a tenant with a hundred due
 * plans does not hold back one with two). The settings that bound it, at their edges.
 */
import { inLanes, DUE_WORK_CHARGES_IN_FLIGHT } from '../../server/payment-plans/due-work';
import { loadConfig } from '../../server/config';

interface Item {
  tenant: string;
  lane: string;
  seq: number;
}

const items = (tenant: string, lanes: number, perLane: number): Item[] =>
  Array.from({ length: lanes * perLane }, (_, i) => ({ tenant, lane: `${tenant}-${Math.floor(i / perLane)}`, seq: i % perLane }));

async function run(all: Item[], width: number) {
  let inFlight = 0;
  let most = 0;
  const started: Item[] = [];
  await inLanes(
    all,
    (item) => item.lane,
    (item) => item.tenant,
    width,
    async (item) => {
      started.push(item);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((done) => setImmediate(done));
      inFlight -= 1;
    },
  );
  return { started, most };
}

test('never more than `width` in flight, and every item once', async () => {
  const all = [...items('big', 100, 3), ...items('small', 2, 1)];
  const { started, most } = await run(all, 8);
  expect(most).toBe(8);
  expect(started).toHaveLength(all.length);
  expect(new Set(started).size).toBe(all.length);
  expect((await run(all, 1)).most).toBe(1);
});

test("a tenant with 2 due plans starts among the first, behind another's 100", async () => {
  const all = [...items('big', 100, 3), ...items('small', 2, 1)];
  const { started } = await run(all, 2);
  const firstSmall = started.map((item) => item.tenant).indexOf('small');
  expect(firstSmall).toBeLessThanOrEqual(2);
  expect(started.filter((item) => item.tenant === 'small').length).toBe(2);
  // Both of small's lanes begin within the first two rounds (four lane starts).
  const laneStarts = started.filter((item) => item.seq === 0).map((item) => item.tenant);
  expect(laneStarts.slice(0, 4).filter((tenant) => tenant === 'small')).toHaveLength(2);
});

test("a lane's items run one after another, in order", async () => {
  const { started } = await run(items('one', 3, 4), 3);
  for (const lane of ['one-0', 'one-1', 'one-2']) expect(started.filter((item) => item.lane === lane).map((item) => item.seq)).toEqual([0, 1, 2, 3]);
});

test('settings of the charge steps and due work, at their edges', () => {
  const defaults = loadConfig({});
  expect(defaults).toMatchObject({ dueWorkChargesInFlight: DUE_WORK_CHARGES_IN_FLIGHT, gatewayAnswerWaitMs: 10_000, chargeRecoveryAfterSeconds: 120, testChargeSteps: [] });
  expect(DUE_WORK_CHARGES_IN_FLIGHT).toBe(64);
  expect(loadConfig({ DUE_WORK_CHARGES_IN_FLIGHT: '1' }).dueWorkChargesInFlight).toBe(1);
  expect(loadConfig({ DUE_WORK_CHARGES_IN_FLIGHT: '1024' }).dueWorkChargesInFlight).toBe(1024);
  expect(() => loadConfig({ DUE_WORK_CHARGES_IN_FLIGHT: '0' })).toThrow(/DUE_WORK_CHARGES_IN_FLIGHT/);
  expect(() => loadConfig({ DUE_WORK_CHARGES_IN_FLIGHT: '1025' })).toThrow(/DUE_WORK_CHARGES_IN_FLIGHT/);
  expect(loadConfig({ GATEWAY_ANSWER_WAIT_MS: '1' }).gatewayAnswerWaitMs).toBe(1);
  expect(() => loadConfig({ GATEWAY_ANSWER_WAIT_MS: '0' })).toThrow(/GATEWAY_ANSWER_WAIT_MS/);
  expect(loadConfig({ CHARGE_RECOVERY_AFTER_SECONDS: '0' }).chargeRecoveryAfterSeconds).toBe(0);
  expect(() => loadConfig({ CHARGE_RECOVERY_AFTER_SECONDS: '-1' })).toThrow(/CHARGE_RECOVERY_AFTER_SECONDS/);
  expect(loadConfig({ TEST_CHARGE_STEP: 'pause:reserved@1101,die:answered' }).testChargeSteps).toEqual([
    { action: 'pause', step: 'reserved', cents: 1101 },
    { action: 'die', step: 'answered' },
  ]);
  expect(() => loadConfig({ TEST_CHARGE_STEP: 'pause:asked' })).toThrow(/TEST_CHARGE_STEP/);
  expect(loadConfig({ TEST_SANDBOX_LOSE_ANSWER_CENTS: '1313' }).testSandboxLoseAnswerCents).toBe(1313);
  expect(() => loadConfig({ TEST_SANDBOX_LOSE_ANSWER_CENTS: '0' })).toThrow(/TEST_SANDBOX_LOSE_ANSWER_CENTS/);
});
