/**
 * The processor's pace across real processes: three OS processes, each with four callers taking
 * slots of one pace key as fast as they are let, against one PostgreSQL, at 20 per second for
 * four seconds. Counted by the time each slot was granted, second by second: no second has more
 * than 20, and the processes together were granted about 20 a second (the limit is shared, not
 * 20 each, and not far below it).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitsOf, spawnProcess, writeWhole, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { paceNow } from '../../server/gateway/processor-pace';

const RATE = 20;
const PROCESSES = 3;
const SECONDS = 4;

let database: { url: string; drop: () => Promise<void> };
const children: Spawned[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  for (const child of children) child.killAll();
  await database?.drop();
});

test(`${PROCESSES} processes taking slots of one pace at ${RATE}/s for ${SECONDS} s: no second over ${RATE}, and about ${RATE} a second in all`, async () => {
  const goFile = join(mkdtempSync(join(tmpdir(), 'dcs-pace-')), 'go.json');
  const env = { ...process.env, DATABASE_URL: database.url, PACE_KEY: 'processor-config:pace-test', PACE_RATE: String(RATE), PACE_CONCURRENCY: '4', PACE_GO_FILE: goFile };
  for (let i = 0; i < PROCESSES; i++) children.push(spawnProcess(process.execPath, ['--import', 'tsx', 'test/support/pace-taker.ts'], env));
  await Promise.all(children.map((child) => child.waitFor('READY', 90_000)));
  // All start together, on a second's boundary, so that every counted second is a whole one.
  const startAt = Math.ceil(paceNow() / 1000) * 1000 + 1000;
  writeWhole(goFile, JSON.stringify({ startAt, endAt: startAt + SECONDS * 1000 }));
  expect(await exitsOf(children)).toEqual(Array(PROCESSES).fill({ code: 0 }));

  const grants = children.map((child) => JSON.parse(/^GRANTED (.*)$/m.exec(child.output())![1]!) as number[]);
  // Every process was granted some: the rate is shared, not taken by one.
  for (const granted of grants) expect(granted.length).toBeGreaterThan(0);
  const perSecond = new Map<number, number>();
  for (const at of grants.flat()) perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
  const seconds = [...perSecond.keys()].sort();
  const over = seconds.filter((second) => perSecond.get(second)! > RATE);
  expect({ over, counts: seconds.map((second) => perSecond.get(second)) }).toEqual({ over: [], counts: expect.any(Array) });
  // Close to the rate × the time: at least 80% of it (slots lost to a late wake, a process starting its first batch).
  const total = grants.flat().length;
  expect(total).toBeLessThanOrEqual(RATE * SECONDS);
  expect(total).toBeGreaterThanOrEqual(0.8 * RATE * SECONDS);
}, 180_000);
