/**
 * The write lane against real PostgreSQL: writes hold at most the pool less READ_RESERVE
 * connections, so a read finds one free while writes wait in the lane; a write that holds a
 * connection of the lane and asks for another (a statement on the pool inside its own
 * transaction) does not wait on itself.
 */
import type { Knex } from 'knex';
import { connect } from '../../server/db/database';
import { inWriteLane, READ_RESERVE } from '../../server/db/write-lane';
import { createTestDatabase } from '../support/test-app';

let db: Knex;
let drop: () => Promise<void>;
const POOL = READ_RESERVE + 1;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  db = connect(database.url, POOL);
});
afterAll(async () => {
  await db?.destroy();
  await drop?.();
});

test('writes take at most the pool less the reserve; reads pass them; a waiting write goes on once one is freed', async () => {
  const order: string[] = [];
  let finish!: () => void;
  const held = new Promise<void>((done) => (finish = done));
  let started!: () => void;
  const inside = new Promise<void>((done) => (started = done));
  // The lane's one connection (POOL - READ_RESERVE), held by an open transaction.
  const first = inWriteLane(() =>
    db.transaction(async (trx) => {
      await trx.raw('select 1');
      started();
      await held;
      order.push('first write done');
    }),
  );
  await inside;
  const second = inWriteLane(async () => {
    await db.raw('select 2');
    order.push('second write');
  });
  // Every read gets a connection while the second write waits in the lane.
  try {
    await Promise.all(
      Array.from({ length: READ_RESERVE }, async (_, i) => {
        await db.raw('select ?::int', [i]);
        order.push('read');
      }),
    );
  } finally {
    finish();
  }
  await Promise.all([first, second]);
  expect(order.slice(0, READ_RESERVE)).toEqual(Array.from({ length: READ_RESERVE }, () => 'read'));
  expect(order.slice(READ_RESERVE)).toEqual(['first write done', 'second write']);
});

test("a write holding the lane's connection gets another for a statement on the pool", async () => {
  const answer = await inWriteLane(() =>
    db.transaction(async (trx) => {
      await trx.raw('select 1');
      const { rows } = await db.raw('select 42 AS n');
      return rows[0].n;
    }),
  );
  expect(answer).toBe(42);
});
