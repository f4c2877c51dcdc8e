/**
 * The processor's pace as the processor counts it: two OS processes, each with four callers
 * taking slots of one pace key and sending an HTTP request as soon as each is granted, to a
 * local server that stamps each request when it has arrived (its body read), as a processor's
 * rate limiter does, second by second. No second it counts holds more than the rate: a slot is
 * used only early enough in its second to arrive within it (processor-pace.ts SEND_MARGIN_MS),
 * so a request sent at the end of one second is never counted on top of the next one's.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitsOf, spawnProcess, writeWhole, type Spawned } from '../support/processes';
import { createTestDatabase } from '../support/test-app';
import { paceNow } from '../../server/gateway/processor-pace';

const RATE = 20;
const PROCESSES = 2;
const SECONDS = 4;

let database: { url: string; drop: () => Promise<void> };
let server: Server;
const arrivals: number[] = [];
const children: Spawned[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  server = createServer(async (req, res) => {
    for await (const chunk of req) void chunk;
    arrivals.push(Date.now());
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
});

afterAll(async () => {
  for (const child of children) child.killAll();
  server?.closeAllConnections();
  await new Promise((done) => server?.close(done));
  await database?.drop();
});

test(`${PROCESSES} processes sending a request per slot at ${RATE}/s for ${SECONDS} s: no second, counted by arrival, over ${RATE}`, async () => {
  const goFile = join(mkdtempSync(join(tmpdir(), 'dcs-pace-')), 'go.json');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/payment_intents`;
  const env = { ...process.env, DATABASE_URL: database.url, PACE_KEY: 'processor-config:arrivals', PACE_RATE: String(RATE), PACE_CONCURRENCY: '4', PACE_GO_FILE: goFile, PACE_SEND_URL: url };
  for (let i = 0; i < PROCESSES; i++) children.push(spawnProcess(process.execPath, ['--import', 'tsx', 'test/support/pace-taker.ts'], env));
  await Promise.all(children.map((child) => child.waitFor('READY', 90_000)));
  const startAt = Math.ceil(paceNow() / 1000) * 1000 + 1000;
  writeWhole(goFile, JSON.stringify({ startAt, endAt: startAt + SECONDS * 1000 }));
  expect(await exitsOf(children)).toEqual(Array(PROCESSES).fill({ code: 0 }));

  const perSecond = new Map<number, number>();
  for (const at of arrivals) perSecond.set(Math.floor(at / 1000), (perSecond.get(Math.floor(at / 1000)) ?? 0) + 1);
  const seconds = [...perSecond.keys()].sort();
  const over = seconds.filter((second) => perSecond.get(second)! > RATE);
  expect({ over, counts: seconds.map((second) => perSecond.get(second)) }).toEqual({ over: [], counts: expect.any(Array) });
  // Each process's requests arrived, and together about the rate (a slot given up by a late wake is lost).
  const sent = children.map((child) => (JSON.parse(/^GRANTED (.*)$/m.exec(child.output())![1]!) as number[]).length);
  for (const each of sent) expect(each).toBeGreaterThan(0);
  expect(arrivals.length).toBeGreaterThanOrEqual(0.7 * RATE * SECONDS);
  expect(arrivals.length).toBeLessThanOrEqual(RATE * SECONDS + PROCESSES * 4);
}, 180_000);
