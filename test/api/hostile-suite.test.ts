/**
 * Hostile requests for every operation of the document, generated with a fixed seed: each
 * starts from a valid request (the document's example, on data that exists) and changes its
 * path, query, headers or body the way an attacker or a careless client would. Whatever comes
 * back must be below 500, every 4xx in the error shape, and a refused request must leave the
 * database exactly as it was. HOSTILE_RUNS (requests per operation) runs it longer.
 */
import fc from 'fast-check';
import { errorShapeProblem, rawRequest, type RawAnswer } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';
import { Fixtures, seed } from './hostile/fixtures';
import { operationsOf, type Operation } from './hostile/operations';
import { planArbitrary, render, type Plan } from './hostile/plans';

const RUNS = Number(process.env.HOSTILE_RUNS ?? 15);
const SEED = 20261124;

let app: TestApp;
let fixtures: Fixtures;
const operations = operationsOf();
const statuses = new Map<number, number>();
let requests = 0;

beforeAll(async () => {
  app = await startTestApp({ webhookAllowInsecureUrls: true, bulkSessionRateLimitPerMinute: 1_000_000 });
  fixtures = await seed(app);
});
afterAll(async () => {
  const seen = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`);
  console.log(`hostile suite: ${requests} requests over ${operations.length} operations (${RUNS} each, seed ${SEED}); statuses ${seen.join(' ')}`);
  await app?.stop();
});

let snapshotSql: string | undefined;

/** Everything a request could change, as one hash: every row of every table of the service, and the job queue. */
async function snapshot(): Promise<string> {
  if (!snapshotSql) {
    const { rows } = await app.db.raw<{ rows: { table_name: string }[] }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
          AND table_name <> 'rate_limits' AND table_name NOT LIKE 'knex%' ORDER BY table_name`,
    );
    const parts = rows.map(({ table_name: table }) => `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "${table}" t)`);
    snapshotSql = `SELECT md5(concat_ws(',', ${parts.join(', ')}, (SELECT count(*) FROM pgboss.job)::text)) AS "all"`;
  }
  const { rows } = await app.db.raw<{ rows: { all: string }[] }>(snapshotSql);
  return rows[0]!.all;
}

/** The Portal's pages answer a page of ours (HTML, no stack); everything else the spec's error body. */
const isPortalPage = (path: string) => path.startsWith('/portal/') && !path.startsWith('/portal/api/');

function problem(answer: RawAnswer, path: string): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  // (A path refused before it reaches the Portal, such as one with NUL, gets the error body.)
  if (answer.status >= 400 && isPortalPage(path) && answer.type.startsWith('text/html')) {
    if (!answer.text.startsWith('<!doctype html>')) return 'not a Portal page';
    return /\bat .*\.[jt]s:\d+/.test(answer.text) ? 'a stack trace' : undefined;
  }
  if (answer.status >= 400) return errorShapeProblem(answer);
  return undefined;
}

test.each(operations.map((operation, index) => [operation.label, operation, index] as const))('%s', async (_label, operation: Operation, index) => {
  let before = await snapshot();
  await fc.assert(
    fc.asyncProperty(planArbitrary(operation), async (plans: Plan[]) => {
      const request = render(operation, plans, fixtures, app);
      const answer = await rawRequest(app.origin, request);
      requests += 1;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const wrong = problem(answer, request.path);
      if (wrong) throw new Error(`${request.method} ${request.path.slice(0, 300)}: ${wrong}`);
      const after = await snapshot();
      if (answer.status >= 400 && after !== before) throw new Error(`${request.method} ${request.path.slice(0, 300)} was refused (${answer.status}) but changed data`);
      before = after;
      // A deletion that went through takes a fixture away: make the set whole again.
      if (request.method === 'DELETE' && answer.status < 300) {
        fixtures = await seed(app);
        before = await snapshot();
      }
    }),
    { seed: SEED + index, numRuns: RUNS, endOnFailure: true },
  );
}, 120_000);
