/**
 * DATABASE_POOL_MAX: how many connections a server process's pool may open (20 unless set,
 * 10 to 200), as the database sees them while more statements than that wait at once.
 */
import { loadConfig } from '../../server/kernel/config';
import { connect, openDatabase, type Database } from '../../server/db/database';
import { createTestDatabase } from '../support/test-app';

let database: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database.drop();
});

/** The most connections `opened` has to the test's database while 40 statements wait together (each holds its connection 300 ms). */
async function connectionsUnderLoad(opened: Database): Promise<number> {
  const db = opened.knex;
  let most = 0;
  let waiting = true;
  const watching = (async () => {
    const watcher = connect(database.url, 1);
    try {
      while (waiting) {
        // Every connection to this file's database but the watcher's own.
        const [{ n }] = (await watcher.raw('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows;
        most = Math.max(most, n);
        await new Promise((done) => setTimeout(done, 20));
      }
    } finally {
      await watcher.destroy();
    }
  })();
  await Promise.all(Array.from({ length: 40 }, () => db.raw('SELECT pg_sleep(0.3)')));
  waiting = false;
  await watching;
  return most;
}

describe('DATABASE_POOL_MAX', () => {
  test('is 20 when unset; 10 and 200 are taken; below 10, above 200 or not a whole number stops the start', () => {
    expect(loadConfig({}).databasePoolMax).toBe(20);
    expect(loadConfig({ DATABASE_POOL_MAX: '10' }).databasePoolMax).toBe(10);
    expect(loadConfig({ DATABASE_POOL_MAX: '200' }).databasePoolMax).toBe(200);
    for (const bad of ['9', '201', '0', '12.5', 'many']) {
      expect(() => loadConfig({ DATABASE_POOL_MAX: bad })).toThrow(`DATABASE_POOL_MAX must be a whole number from 10 to 200, not "${bad}"`);
    }
  });

  test.each([
    ['unset', undefined, 20],
    ['at its least', '10', 10],
  ])('%s: the server opens that many connections and no more while more statements wait', async (_label, set, expected) => {
    const opened = await openDatabase(loadConfig({ DATABASE_URL: database.url, ...(set ? { DATABASE_POOL_MAX: set } : {}) }));
    try {
      expect(await connectionsUnderLoad(opened)).toBe(expected);
    } finally {
      await opened.close();
    }
  });
});
