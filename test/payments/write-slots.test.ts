/**
 * The slots of money's transactions: never more than `width` at once, taken in the order asked,
 * a slot freed by a failure too; on a transaction already open no slot is taken (a caller that
 * charges inside its own transaction already holds its connection).
 */
import { moneyWrites, slots, WRITE_SLOTS } from '../../server/payments/write-slots';

test('at most `width` at once, in the order asked, and a failure frees its slot', async () => {
  const inSlots = slots(2);
  let now = 0;
  let most = 0;
  const order: number[] = [];
  const work = (n: number, fail = false) =>
    inSlots(async () => {
      order.push(n);
      now += 1;
      most = Math.max(most, now);
      await new Promise((resolve) => setImmediate(resolve));
      now -= 1;
      if (fail) throw new Error(`failed ${n}`);
      return n;
    });
  const results = await Promise.allSettled([work(1), work(2, true), work(3), work(4), work(5)]);
  expect(most).toBe(2);
  expect(order).toEqual([1, 2, 3, 4, 5]);
  expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  // Every slot is free again.
  expect(await Promise.all([work(6), work(7)])).toEqual([6, 7]);
});

test('inside an open transaction no slot is taken, so a caller holding slots cannot wait on itself', async () => {
  let inside = 0;
  const held = Array.from({ length: WRITE_SLOTS }, () => {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    return { release, taken: moneyWrites({}, () => done) };
  });
  // Every slot is held: work on a transaction already open still runs.
  await moneyWrites({ isTransaction: true }, async () => {
    inside += 1;
  });
  expect(inside).toBe(1);
  for (const each of held) each.release();
  await Promise.all(held.map((each) => each.taken));
});
