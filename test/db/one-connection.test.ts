/**
 * A read of many statements on one pooled connection, pipelined (db/one-connection.ts): its
 * statements run on one backend, started together they are all written before the first is
 * answered, one failing fails alone, and the connection goes back to the pool in its ordinary
 * mode, answering the next user as before.
 */
import { connect } from '../../server/db/database';
import { onOneConnection } from '../../server/db/one-connection';

const POOL = 3;
let db: ReturnType<typeof connect>;
beforeAll(async () => {
  db = connect(process.env.TEST_ADMIN_DATABASE_URL!, POOL);
});
afterAll(async () => db?.destroy());

const pid = async (knex: typeof db) => Number((await knex.raw('select pg_backend_pid() AS pid')).rows[0].pid);

test('statements started together run on one backend, all written before the first is answered', async () => {
  let writtenAhead = -1;
  const pids = await onOneConnection(db, async (one) => {
    const connection = (await one.client.acquireConnection()) as { _sentQueryQueue: unknown[] };
    const started = Promise.all(Array.from({ length: 5 }, () => one.raw('select pg_backend_pid() AS pid from pg_sleep(0.05)')));
    // node-postgres' queue of statements written and not yet answered (besides the one being answered).
    await new Promise((done) => setImmediate(done));
    writtenAhead = connection._sentQueryQueue.length;
    return (await started).map((result) => Number(result.rows[0].pid));
  });
  expect(new Set(pids).size).toBe(1);
  expect(writtenAhead).toBe(4);
});

test('a failing statement fails alone and the read; the connection then answers the next user in order', async () => {
  const outcome = await onOneConnection(db, async (one) =>
    Promise.allSettled([one.raw('select 1 AS n'), one.raw('select * from no_such_table'), one.raw('select 3 AS n')]),
  );
  expect(outcome.map((each) => each.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((outcome[2] as PromiseFulfilledResult<{ rows: { n: number }[] }>).value.rows[0]!.n).toBe(3);

  await expect(onOneConnection(db, async (one) => Promise.all([one.raw('select pg_sleep(0.1)'), one.raw('select * from no_such_table'), one.raw('select 1')]))).rejects.toThrow(/no_such_table/);
  // Every connection of the pool, back in its ordinary mode, answers statements in turn.
  const answers = await Promise.all(Array.from({ length: POOL * 3 }, (_, n) => db.raw('select ?::int AS n', [n])));
  expect(answers.map((answer) => answer.rows[0].n)).toEqual(Array.from({ length: POOL * 3 }, (_, n) => n));
  const connections = await Promise.all(Array.from({ length: POOL }, () => db.client.acquireConnection()));
  expect(connections.map((connection) => (connection as { pipeline: boolean }).pipeline)).toEqual(Array(POOL).fill(false));
  await Promise.all(connections.map((connection) => db.client.releaseConnection(connection)));
});

test('the read holds one pooled connection, whatever its number of statements, and gives it back', async () => {
  const before = await pid(db);
  const seen = await onOneConnection(db, async (one) => Promise.all(Array.from({ length: 20 }, () => pid(one))));
  expect(new Set(seen).size).toBe(1);
  // The whole pool but the read's connection is free meanwhile: taken all at once, it answers.
  const held = await onOneConnection(db, async () => Promise.all(Array.from({ length: POOL - 1 }, () => db.client.acquireConnection())));
  await Promise.all(held.map((connection) => db.client.releaseConnection(connection)));
  expect(before).toBeGreaterThan(0);
});

test('inside a transaction the read runs on the transaction itself', async () => {
  await db.transaction(async (trx) => {
    const outer = await pid(trx as unknown as typeof db);
    expect(await onOneConnection(trx as unknown as typeof db, (one) => pid(one))).toBe(outer);
  });
});
