/**
 * Group commit for due work (batches.ts), without a database: what is handed in together runs
 * together, up to the batch size; what arrives while batches run waits for the next; no more
 * batches at once than allowed; and a batch that fails as a whole is run again item by item, so
 * one bad item fails only itself.
 */
import { batcher, DUE_BATCH } from '../../server/kernel/batcher';
import { dueBatchFor } from '../../server/payment-plans/due-work';

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('items handed in together run in one batch, up to its size; the rest in the next', async () => {
  const batches: number[][] = [];
  const twice = batcher<number, number>(async (items) => {
    batches.push(items);
    await tick();
    return items.map((item) => item * 2);
  }, { max: 4, parallel: 1 });
  const results = await Promise.all([1, 2, 3, 4, 5, 6].map((item) => twice.add(item)));
  expect(results).toEqual([2, 4, 6, 8, 10, 12]);
  expect(batches).toEqual([
    [1, 2, 3, 4],
    [5, 6],
  ]);
});

test('what arrives while batches run waits for the next; never more batches at once than allowed', async () => {
  let running = 0;
  let most = 0;
  const batches: number[][] = [];
  const echo = batcher<number, number>(async (items) => {
    running += 1;
    most = Math.max(most, running);
    batches.push(items);
    for (let i = 0; i < 5; i += 1) await tick();
    running -= 1;
    return items;
  }, { max: 100, parallel: 2 });
  const first = [echo.add(1)];
  await tick();
  const second = [echo.add(2)];
  await tick();
  // Both batches are running: these three wait, and go together.
  const third = [echo.add(3), echo.add(4), echo.add(5)];
  expect(await Promise.all([...first, ...second, ...third])).toEqual([1, 2, 3, 4, 5]);
  expect(most).toBe(2);
  expect(batches).toEqual([[1], [2], [3, 4, 5]]);
});

test('a batch that fails as a whole is run again item by item: only the bad item fails', async () => {
  const runs: number[][] = [];
  const strict = batcher<number, number>(async (items) => {
    runs.push(items);
    if (items.includes(3)) throw new Error('deadlock detected');
    return items;
  });
  const outcomes = await Promise.allSettled([1, 2, 3, 4].map((item) => strict.add(item)));
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  expect((outcomes[2] as PromiseRejectedResult).reason).toEqual(new Error('deadlock detected'));
  expect(runs).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
});

test("an item's own failure in a batch fails only that item", async () => {
  const checked = batcher<number, number>(async (items) => items.map((item) => (item < 0 ? new Error(`negative: ${item}`) : item)));
  const outcomes = await Promise.allSettled([5, -1, 7].map((item) => checked.add(item)));
  expect(outcomes).toEqual([
    { status: 'fulfilled', value: 5 },
    { status: 'rejected', reason: new Error('negative: -1') },
    { status: 'fulfilled', value: 7 },
  ]);
});

test("the due work's batches are half the flow (two of each step at once), at most DUE_BATCH", async () => {
  expect([1, 2, 7, 64, 100, 128, 1024].map(dueBatchFor)).toEqual([1, 1, 4, 32, 50, DUE_BATCH, DUE_BATCH]);
  // 64 in flight handed in at once: two batches of 32, both running at once.
  let running = 0;
  let most = 0;
  const sizes: number[] = [];
  const starts = batcher<number, number>(
    async (items) => {
      running += 1;
      most = Math.max(most, running);
      sizes.push(items.length);
      await tick();
      running -= 1;
      return items;
    },
    { max: dueBatchFor(64) },
  );
  await Promise.all(Array.from({ length: 64 }, (_, index) => starts.add(index)));
  expect(sizes).toEqual([32, 32]);
  expect(most).toBe(2);
});
