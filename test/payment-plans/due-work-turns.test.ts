/**
 * Due work at scale, without a database: a flow of at most `width` items in flight, the next
 * starting as soon as one ends (one that never ends holds back only its own slot), a lane's
 * items one after another in order, the tenants taken in turn (a tenant with a hundred due plans
 * does not hold back one with two), and every item carried out once. The settings that bound it,
 * at their edges.
 */
import { DUE_WORK_CHARGES_IN_FLIGHT } from '../../server/payment-plans/due-work';
import { flowDue } from '../../server/payment-plans/due-flow';
import { loadConfig } from '../../server/kernel/config';

interface Item {
  tenant: string;
  lane: string;
  seq: number;
}

const items = (tenant: string, lanes: number, perLane: number): Item[] =>
  Array.from({ length: lanes * perLane }, (_, i) => ({ tenant, lane: `${tenant}-${Math.floor(i / perLane)}`, seq: i % perLane }));

const keyOf = (item: Item) => `${item.lane}/${item.seq}`;

/**
 * A table of due items read as the database would be: what is not done yet, `batch` (plus what
 * the flow holds) at a time, in the order given. `wait` may hold an item back until it resolves.
 */
async function run(all: Item[], width: number, { batch = 10, wait }: { batch?: number; wait?: (item: Item) => Promise<void> | undefined } = {}) {
  const done = new Set<string>();
  let inFlight = 0;
  let most = 0;
  const started: Item[] = [];
  const finished: Item[] = [];
  const ran = await flowDue<Item>({
    width,
    keyOf,
    laneOf: (item) => item.lane,
    tenantOf: (item) => item.tenant,
    fetch: async (known) => all.filter((item) => !done.has(keyOf(item))).slice(0, batch + known),
    run: async (item) => {
      if (done.has(keyOf(item))) return false;
      started.push(item);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await (wait?.(item) ?? new Promise((resolve) => setImmediate(resolve)));
      inFlight -= 1;
      done.add(keyOf(item));
      finished.push(item);
      return true;
    },
  });
  return { started, finished, most, ran };
}

/** Tenant `big`'s items first in the table, as a backlog would read earliest first. */
const backlog = () => [...items('big', 100, 3), ...items('small', 2, 1)];

test('never more than `width` in flight, and every item once', async () => {
  const all = backlog();
  const { started, most, ran } = await run(all, 8);
  expect(most).toBe(8);
  expect(ran).toBe(all.length);
  expect(started).toHaveLength(all.length);
  expect(new Set(started.map(keyOf)).size).toBe(all.length);
  expect((await run(all, 1)).most).toBe(1);
});

test("a small tenant's items are all done before a big tenant's are, whatever the big one's backlog", async () => {
  const all = [...items('big', 300, 1), ...items('small', 10, 1)];
  const { finished } = await run(all, 4, { batch: 400 });
  const lastSmall = finished.map((item) => item.tenant).lastIndexOf('small');
  // The tenants take turns: small's ten are done among the first twenty or so, big's 300 long after.
  expect(finished.filter((item) => item.tenant === 'small')).toHaveLength(10);
  expect(finished.slice(0, lastSmall + 1).filter((item) => item.tenant === 'big').length).toBeLessThanOrEqual(10 + 4);
});

test('one item that does not end holds back only its own slot: everything else is done meanwhile', async () => {
  const all = backlog();
  let release!: () => void;
  const stuck = new Promise<void>((resolve) => (release = resolve));
  const stuckKey = keyOf(all[5]!);
  let othersDone = 0;
  const finished = run(all, 4, {
    wait: (item) => (keyOf(item) === stuckKey ? stuck : new Promise<void>((resolve) => setImmediate(resolve)).then(() => void (othersDone += 1))),
  });
  // A flow in passes would wait for the stuck item before reading the rest: here all the others end first.
  while (othersDone < all.length - 1) await new Promise((resolve) => setImmediate(resolve));
  release();
  expect((await finished).ran).toBe(all.length);
});

test('a refill read before an item ended does not bring it back: each item starts once', async () => {
  // The table as a slow read answers it: what was due when the read began, answered later.
  const done = new Set<string>();
  const all = items('t', 4, 1);
  const starts: string[] = [];
  let reads = 0;
  const ran = await flowDue<Item>({
    width: 8,
    keyOf,
    laneOf: (item) => item.lane,
    tenantOf: (item) => item.tenant,
    fetch: async () => {
      reads += 1;
      const due = all.filter((item) => !done.has(keyOf(item)));
      // Every read after the first answers after the items in flight have ended.
      if (reads > 1) for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
      return due;
    },
    run: async (item) => {
      starts.push(keyOf(item));
      if (done.has(keyOf(item))) return false;
      await new Promise((resolve) => setImmediate(resolve));
      done.add(keyOf(item));
      return true;
    },
  });
  expect(ran).toBe(4);
  expect(starts.sort()).toEqual(all.map(keyOf).sort());
});

test("a lane's items run one after another, in order", async () => {
  const { started } = await run(items('one', 3, 4), 3);
  for (const lane of ['one-0', 'one-1', 'one-2']) expect(started.filter((item) => item.lane === lane).map((item) => item.seq)).toEqual([0, 1, 2, 3]);
});

test('an item that throws does not stop the others; the error is thrown once they are done', async () => {
  const all = items('one', 20, 1);
  let finished = 0;
  const failing = flowDue<Item>({
    width: 3,
    keyOf,
    laneOf: (item) => item.lane,
    tenantOf: (item) => item.tenant,
    fetch: async () => all,
    run: async (item) => {
      if (item.lane === 'one-2') throw new Error('deadlock');
      finished += 1;
      return true;
    },
  });
  await expect(failing).rejects.toThrow('deadlock');
  expect(finished).toBe(19);
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
