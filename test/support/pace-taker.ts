/**
 * A process that takes slots of one processor pace (server/gateway/processor-pace.ts) as fast as
 * it is let, for the multi-process pace test: it connects, prints READY, waits for the start file
 * (`PACE_GO_FILE`: `{"startAt","endAt"}` in this machine's clock, ms) and, with
 * `PACE_CONCURRENCY` callers, takes slots from `startAt` until `endAt`; then prints the time each
 * slot was granted as one line, `GRANTED [ms, …]`, and ends. With `PACE_SEND_URL`, each caller
 * POSTs to it as soon as its slot is granted (and waits for the answer), as a processor's
 * client does.
 *
 *   DATABASE_URL=… PACE_KEY=… PACE_RATE=20 PACE_CONCURRENCY=4 PACE_GO_FILE=… node --import tsx test/support/pace-taker.ts
 */
import { existsSync, readFileSync } from 'node:fs';
import { connect } from '../../server/db/database';
import { paceNow, processorPace } from '../../server/gateway/processor-pace';

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

async function main(): Promise<void> {
  const env = (name: string) => process.env[name] ?? (() => { throw new Error(`${name} is required`); })();
  const db = connect(env('DATABASE_URL'), 4);
  try {
    const pace = processorPace(db, env('PACE_KEY'), Number(env('PACE_RATE')));
    await db.raw('SELECT 1');
    process.stdout.write('READY\n');
    const goFile = env('PACE_GO_FILE');
    while (!existsSync(goFile)) await sleep(10);
    const { startAt, endAt } = JSON.parse(readFileSync(goFile, 'utf8')) as { startAt: number; endAt: number };
    const sendTo = process.env.PACE_SEND_URL;
    await sleep(Math.max(0, startAt - paceNow()));
    const granted: number[] = [];
    await Promise.all(
      Array.from({ length: Number(env('PACE_CONCURRENCY')) }, async () => {
        while (paceNow() < endAt) {
          await pace.take();
          const at = paceNow();
          // A slot granted after the end is not counted (the test counts the interval's).
          if (at < endAt) granted.push(at);
          // Sent as a processor's request would be, at once (the test's server counts its arrival).
          if (sendTo) await (await fetch(sendTo, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ at }) })).arrayBuffer();
        }
      }),
    );
    process.stdout.write(`STATS ${JSON.stringify(pace.stats())}\n`);
    process.stdout.write(`GRANTED ${JSON.stringify(granted)}\n`);
  } finally {
    await db.destroy();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exitCode = 1;
});
