/**
 * The slots of one webhook (delivery-lanes.ts): an attempt that finds them all taken waits for
 * one, first come first served, while its webhook answers; a webhook that frees none for
 * TURN_MS has its waiting attempts sent back (parked), and so has one in the slow lane at once;
 * and what a fetch may take of each webhook.
 */
import { deliveryLanes, SLOW_ANSWER_MS, TURN_MS } from '../../server/webhooks/delivery-lanes';

const A = 'a0000000-0000-4000-8000-000000000001';
const B = 'b0000000-0000-4000-8000-000000000002';
const C = 'c0000000-0000-4000-8000-000000000003';

test('an attempt beyond the cap waits for a slot and gets the first one freed, in the order they came', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 2 });
  expect(lanes.take(A, false, 5000)).toBe(true);
  expect(lanes.take(A, false, 5000)).toBe(true);
  const order: string[] = [];
  const third = Promise.resolve(lanes.take(A, false, 5000)).then((slot) => (order.push('third'), slot));
  const fourth = Promise.resolve(lanes.take(A, false, 5000)).then((slot) => (order.push('fourth'), slot));
  // Another webhook's attempt is not behind them.
  expect(lanes.take(B, false, 5000)).toBe(true);

  lanes.release(A, false, 5);
  expect(await third).toBe(true);
  lanes.release(A, false, 5);
  expect(await fourth).toBe(true);
  expect(order).toEqual(['third', 'fourth']);
  // Each waiter holds the slot it was given: the cap still holds.
  const fifth = Promise.resolve(lanes.take(A, false, 5000));
  lanes.release(A, false, 5);
  expect(await fifth).toBe(true);
});

test('a webhook that frees no slot for TURN_MS has its waiting attempts parked, and parks the next at once', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 1 });
  expect(lanes.take(A, false, 60_000)).toBe(true);
  const waiting = [lanes.take(A, false, 60_000), lanes.take(A, false, 60_000)];
  expect(await Promise.all(waiting)).toEqual([false, false]);
  await new Promise((done) => setTimeout(done, TURN_MS));
  expect(lanes.take(A, false, 60_000)).toBe(false);
  // Once it answers, its attempts wait for its slots again.
  lanes.release(A, false, TURN_MS * 3);
  expect(lanes.take(A, false, 60_000)).toBe(true);
  const next = lanes.take(A, false, 60_000);
  lanes.release(A, false, 5);
  expect(await next).toBe(true);
});

test('an attempt in the slow lane never waits in the process: it is parked', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 1 });
  expect(lanes.take(A, true, 5000)).toBe(true);
  expect(lanes.take(A, true, 5000)).toBe(false);
});

test('an attempt waits no longer than it is given, and a slot freed after is not lost', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 1 });
  expect(lanes.take(A, false, 5000)).toBe(true);
  // Slots turning over: a waiter that runs out of its own time goes back.
  const late = lanes.take(A, false, 1);
  expect(await late).toBe(false);
  lanes.release(A, false, 5);
  expect(lanes.take(A, false, 5000)).toBe(true);
});

test('a fetch takes of a webhook its slots\' worth, as many again while its answers come, none beyond its slots while they stay open, and it is seen slow once they have been full for SLOW_ANSWER_MS', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 2 });
  // Nothing in hand: a webhook not seen yet may bring its slots' worth.
  expect(lanes.fetchLimits(5)).toEqual({ batchSize: 5, caps: {}, otherCap: 2, slow: [], slowCap: 2 });
  for (let i = 0; i < 2; i++) lanes.hold(A, false);
  lanes.hold(B, false);
  expect(lanes.fetchLimits(5).caps).toEqual({ [A]: 0, [B]: 1 });
  // B answers: while its slots turn over, as many again may wait for them in hand.
  expect(lanes.take(B, false, 0)).toBe(true);
  lanes.release(B, false, 5);
  expect(lanes.fetchLimits(5).caps).toEqual({ [A]: 0, [B]: 3 });
  lanes.drop(B);
  expect(lanes.fetchLimits(5).caps).toEqual({ [A]: 0, [B]: 4 });
  lanes.hold(B, false);
  // A's two slots are taken and none is freed: nothing more of it is fetched.
  expect(lanes.take(A, false, 0)).toBe(true);
  expect(lanes.take(A, false, 0)).toBe(true);
  lanes.hold(A, false);
  expect(lanes.fetchLimits(5).caps[A]).toBe(0);
  await new Promise((done) => setTimeout(done, TURN_MS + 10));
  // B's last answer is TURN_MS old: its slots' worth only.
  expect(lanes.fetchLimits(5).caps).toEqual({ [A]: 0, [B]: 1 });
  expect(lanes.takeLaneChanges()).toEqual({ slow: [], fast: [] });
  // Full for more than SLOW_ANSWER_MS: seen slow (to be put in the slow lane), and the slow
  // lane's share counts what it holds.
  await new Promise((done) => setTimeout(done, SLOW_ANSWER_MS - TURN_MS));
  const limits = lanes.fetchLimits(5);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [A], fast: [] });
  expect(limits.slow).toEqual([A]);
  expect(limits.slowCap).toBe(0);
  // Answered, the jobs leave its hand and its slots: it may be fetched again, its slots' worth.
  lanes.release(A, false, SLOW_ANSWER_MS * 2);
  lanes.drop(A);
  lanes.drop(A);
  expect(lanes.fetchLimits(5).caps[A]).toBe(1);
  expect(lanes.fetchLimits(5).slowCap).toBe(1);
});

test('a webhook whose jobs come in the slow lane is fetched only its share of the slow lane', () => {
  // 8 slots: the slow lane holds 2 of them.
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 4 });
  lanes.hold(A, true);
  const limits = lanes.fetchLimits(5);
  expect(limits.caps[A]).toBe(1);
  expect(limits.slow).toEqual([A]);
  expect(limits.slowCap).toBe(1);
});

test('a webhook put in the slow lane for slots full too long, or by the database, leaves it as soon as its answers come fast; a slow one stays', async () => {
  const lanes = deliveryLanes({ concurrency: 8, perWebhook: 2 });
  // A's two slots taken and none freed for SLOW_ANSWER_MS (a stalled process looks the same).
  expect(lanes.take(A, false, 0)).toBe(true);
  expect(lanes.take(A, false, 0)).toBe(true);
  expect(lanes.take(A, false, 0)).toBe(false);
  await new Promise((done) => setTimeout(done, SLOW_ANSWER_MS + 10));
  expect(lanes.take(A, false, 0)).toBe(false);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [A], fast: [] });
  expect(lanes.seenSlow(A)).toBe(true);
  // Its answers take 5 ms: out of the slow lane, here and (to be written) in the database.
  lanes.release(A, false, 5);
  expect(lanes.seenSlow(A)).toBe(false);
  expect(lanes.fetchLimits(5).slow).toEqual([]);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [], fast: [A] });
  // B's jobs come in the slow lane (the database's): answering in 5 ms, it leaves it too.
  lanes.hold(B, true);
  expect(lanes.fetchLimits(5).slow).toEqual([B]);
  expect(lanes.take(B, true, 0)).toBe(true);
  lanes.release(B, true, 5);
  expect(lanes.fetchLimits(5).slow).toEqual([]);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [], fast: [B] });
  // One whose answers take longer than SLOW_ANSWER_MS stays, and nothing is to be written of it.
  lanes.hold(C, true);
  expect(lanes.take(C, true, 0)).toBe(true);
  lanes.release(C, true, SLOW_ANSWER_MS * 5);
  expect(lanes.fetchLimits(5).slow).toEqual([C]);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [C], fast: [] });
  expect(lanes.take(C, true, 0)).toBe(true);
  lanes.release(C, true, SLOW_ANSWER_MS * 5);
  expect(lanes.takeLaneChanges()).toEqual({ slow: [], fast: [] });
});
