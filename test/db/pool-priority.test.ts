/**
 * The pool's connections go first to work that is not yielding (db/pool-priority.ts): with the
 * pool taken, a statement of other work asked after a crowd of yielding statements is answered
 * before them, and yielding work is never starved of its guaranteed few.
 */
import { connect } from '../../server/db/database';
import { yieldingPool } from '../../server/db/pool-priority';

const POOL = 6;
let db: ReturnType<typeof connect>;
beforeAll(async () => {
  db = connect(process.env.TEST_ADMIN_DATABASE_URL!, POOL);
});
afterAll(async () => db?.destroy());

/** Holds `n` connections of the pool until `free` is called. */
async function hold(n: number, asYielding: boolean) {
  let free!: () => void;
  const freed = new Promise<void>((done) => (free = done));
  let holding = 0;
  let allHolding!: () => void;
  const all = new Promise<void>((done) => (allHolding = done));
  const held = Array.from({ length: n }, () => {
    const run = () =>
      db.transaction(async (trx) => {
        await trx.raw('select 1');
        if (++holding === n) allHolding();
        await freed;
      });
    return asYielding ? yieldingPool(run) : run();
  });
  await all;
  return { free: async () => (free(), await Promise.all(held)) };
}

test('a statement of other work asked after many yielding ones is answered first once a connection comes back', async () => {
  const holders = await hold(POOL, false);
  const order: string[] = [];
  const crowd = Array.from({ length: 20 }, (_, index) => yieldingPool(() => db.raw('select 1').then(() => order.push(`charge ${index}`))));
  await new Promise((done) => setImmediate(done));
  const read = db.raw('select 1').then(() => order.push('read'));
  await holders.free();
  await Promise.all([...crowd, read]);
  // The guaranteed few of the yielding work may go first; the read goes before the rest of the crowd.
  expect(order.indexOf('read')).toBeLessThanOrEqual(4);
  expect(order).toHaveLength(21);
});

test('yielding work gets its guaranteed connections while other work crowds the pool', async () => {
  const holders = await hold(POOL, false);
  const order: string[] = [];
  const crowd = Array.from({ length: 20 }, (_, index) => db.raw('select 1').then(() => order.push(`read ${index}`)));
  await new Promise((done) => setImmediate(done));
  const charge = yieldingPool(() => db.raw('select 1').then(() => order.push('charge')));
  await holders.free();
  await Promise.all([...crowd, charge]);
  expect(order.indexOf('charge')).toBeLessThan(POOL);
});

test('yielding work never holds the last connections: other work gets one while it crowds the pool', async () => {
  const holders = await hold(POOL - 2, true);
  // The yielding share (the pool less 2) is taken: another yielding statement waits, a read does not.
  let charged = false;
  const charge = yieldingPool(() => db.raw('select 1').then(() => (charged = true)));
  const read = await db.raw('select 1 AS one');
  expect(read.rows[0].one).toBe(1);
  expect(charged).toBe(false);
  await holders.free();
  await charge;
  expect(charged).toBe(true);
});
