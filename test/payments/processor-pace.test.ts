/**
 * The processor's pace on a real PostgreSQL, in one process (the multi-process test is
 * test/operate/processor-pace.test.ts): one object per key, so that its callers' slots are
 * reserved together; a processor's Retry-After holds back every caller's next slot of the
 * account; what it refuses to be built with.
 */
import type { Knex } from 'knex';
import { connect } from '../../server/db/database';
import { paceNow, processorPace } from '../../server/gateway/processor-pace';
import { createTestDatabase } from '../support/test-app';

let database: { url: string; drop: () => Promise<void> };
let db: Knex;
/** A second pool, as another server process would hold. */
let other: Knex | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  db = connect(database.url, 4);
});

afterAll(async () => {
  await other?.destroy();
  await db?.destroy();
  await database?.drop();
});

test('one pace object per key in a process, its rate the latest asked for; ten callers at once share its batches', async () => {
  const first = processorPace(db, 'processor-config:one', 50);
  const again = processorPace(db, 'processor-config:one', 40);
  expect(again).toBe(first);
  expect(first.perSecond).toBe(40);
  expect(processorPace(db, 'processor-config:two', 40)).not.toBe(first);

  await Promise.all(Array.from({ length: 10 }, () => first.take()));
  const { granted, statements } = first.stats();
  expect(granted).toBe(10);
  // A tenth of a second's slots (4 at 40/s) per statement at most, so 3 at least, and fewer than one each.
  expect(statements).toBeGreaterThanOrEqual(3);
  expect(statements).toBeLessThan(10);
});

test("a processor's Retry-After holds back the account's next slot for every caller: none is granted before it ends", async () => {
  const pace = processorPace(db, 'processor-config:retry-after', 20);
  await pace.take();
  const paused = paceNow();
  await pace.pause(1500);
  // Another process's object for the same key (a pace of its own), as another server would hold.
  other = connect(database.url, 1);
  const elsewhere = processorPace(other, 'processor-config:retry-after', 20);
  await elsewhere.take();
  expect(paceNow() - paused).toBeGreaterThanOrEqual(1500 - 20);
});

test('a pace is built with the pool, a key of 1 to 200 characters and a positive rate', async () => {
  await db.transaction(async (trx) => {
    expect(() => processorPace(trx, 'processor-config:x', 10)).toThrow(/outside our transactions/);
  });
  expect(() => processorPace(db, '', 10)).toThrow(/1 to 200/);
  expect(() => processorPace(db, 'k'.repeat(201), 10)).toThrow(/1 to 200/);
  expect(() => processorPace(db, 'processor-config:x', 0)).toThrow(/positive/);
  expect(() => processorPace(db, 'processor-config:x', Number.NaN)).toThrow(/positive/);
});
