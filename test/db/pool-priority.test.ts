/**
 * The pool's connections go first to work that is not yielding (db/pool-priority.ts): with the
 * pool taken, a statement of other work asked after a crowd of yielding statements is answered
 * before them, yielding work is never starved, and it always leaves connections to the others.
 */
import { connect } from '../../server/db/database';
import { prioritizePool, yieldingPool } from '../../server/db/pool-priority';

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

/** A pool of `size` connections in front of nothing: each acquisition answers at once, in the order the permits are given. */
function fakePool(size: number) {
  let next = 0;
  const client = { acquireConnection: async (): Promise<unknown> => ({ connection: next++ }), releaseConnection: async (_connection: unknown) => {} };
  prioritizePool(client, size);
  const order: string[] = [];
  const ask = async (name: string, asYielding: boolean) => {
    const connection = await (asYielding ? yieldingPool(() => client.acquireConnection()) : client.acquireConnection());
    order.push(name);
    return { release: () => client.releaseConnection(connection) };
  };
  return { ask, order };
}

const settle = () => new Promise((done) => setImmediate(done));

test('a connection that comes back goes to other work before a crowd of yielding work asked earlier, once yielding work holds its guaranteed few', async () => {
  const { ask, order } = fakePool(10);
  const holders = await Promise.all(Array.from({ length: 10 }, (_, index) => ask(`holder ${index}`, index < 4)));
  order.length = 0;
  const crowd = Array.from({ length: 20 }, (_, index) => ask(`charge ${index}`, true));
  const read = ask('read', false);
  await settle();
  // Yielding work holds its 4: the first connection back goes to the read, not to the crowd asked before it.
  await holders[9]!.release();
  await settle();
  expect(order).toEqual(['read']);
  await (await read).release();
  await settle();
  expect(order).toEqual(['read', 'charge 0']);
  void crowd;
});

test('yielding work is never starved: it gets its guaranteed few whatever else waits, and a turn after every 3 others', async () => {
  const { ask, order } = fakePool(10);
  const holders = await Promise.all(Array.from({ length: 10 }, (_, index) => ask(`holder ${index}`, false)));
  order.length = 0;
  const reads = Array.from({ length: 20 }, (_, index) => ask(`read ${index}`, false));
  const charges = Array.from({ length: 10 }, (_, index) => ask(`charge ${index}`, true));
  await settle();
  for (const holder of holders) await holder.release();
  await settle();
  // The first 4 to yielding work (its guaranteed few), then 3 reads for each further charge.
  expect(order).toEqual(['charge 0', 'charge 1', 'charge 2', 'charge 3', 'read 0', 'read 1', 'read 2', 'charge 4', 'read 3', 'read 4']);
  void reads;
  void charges;
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
