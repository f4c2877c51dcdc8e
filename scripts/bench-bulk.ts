/**
 * npm run bench:bulk — the time from POST /bulk to `completed` for 1000 customers, each with
 * an address, a parent and two children, against a plain PostgreSQL COPY of the same rows
 * (1000 customers, 1000 addresses, 3000 accounts) into the same tables, in the same run.
 * Each round uses a fresh organization; medians are printed with their ratio. Also, per round
 * of the service: the statements it sent per 1,000 rows (counted at the driver, on this
 * process's knex connections; the progress polls left out) and where its time went, by phase:
 * the POST, the job's statements by kind (their time from sent to answered, summed), the
 * recording of the events (payloads read and built, the event log and outbox written: its
 * statements, the event log's insert among them, and the rest, this process's work), and the
 * rest (the job's JavaScript, pg-boss's pick-up). Last, what bounds the ratio: the events'
 * recording alone, the import without it, and the event log's insert alone, each against COPY;
 * and the floor: what the import must write besides the rows (its events, its own input),
 * written again by COPY, beside the rows' COPY.
 *
 *   npm run bench:bulk [-- --rounds 5 --rows 1000]
 */
import { diskFileStore } from '../server/files/disk-file-store';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import pino from 'pino';
import { createApiClient } from '../client';
import { webhookEvents } from '../server/webhooks/outbox';
import { API_BASE, createApp, listen } from '../server/app';
import { loadConfig } from '../server/kernel/config';
import { SecretBox } from '../server/crypto/secrets';
import { openScratchDatabase } from './scratch-database';
import { startQueue } from '../server/jobs/queue';
import { startWorkers, type Workers } from '../server/workers';
import { createOrganization } from '../server/organizations/organization-repo';
import { median } from './measure';
import { timeStatements } from './statement-count';

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, rows: { type: 'string', default: '1000' } } });
const ROWS = Number(options.rows);

function items(prefix: string) {
  return Array.from({ length: ROWS }, (_, i) => ({
    customer: {
      name: `Customer ${i}`,
      email: `c${i}@mail.debt-collection.example`,
      external_id: `${prefix}-C-${i}`,
      address: { line1: `${i} Oak Hollow Dr`, city: 'Austin', state: 'TX', postal_code: '78704' },
    },
    location: { name: 'Lakeside Medical Center', external_id: `${prefix}-LOC` },
    parent_debt_accounts: [{ external_id: `${prefix}-P-${i}`, balance: 0 }],
    debt_accounts: [
      { external_id: `${prefix}-A-${i}`, parent_external_id: `${prefix}-P-${i}`, balance: 10000, current_balance: 7500 },
      { external_id: `${prefix}-B-${i}`, parent_external_id: `${prefix}-P-${i}`, balance: 2500 },
    ],
  }));
}

async function copy(client: pg.PoolClient, table: string, columns: string[], lines: string[]): Promise<void> {
  await pipeline(Readable.from(lines.map((line) => `${line}\n`)), client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`)));
}

/** The same rows, written by COPY: the floor of what any importer could do. */
async function copyBaseline(pool: pg.Pool, organizationId: string, prefix: string): Promise<number> {
  const client = await pool.connect();
  try {
    const started = performance.now();
    await client.query('BEGIN');
    const location = randomUUID();
    await copy(client, 'locations', ['id', 'organization_id', 'environment', 'external_id', 'name'], [`${location}\t${organizationId}\tproduction\t${prefix}-LOC\tLakeside Medical Center`]);
    const customers: string[] = [];
    const addresses: string[] = [];
    const accounts: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      const customer = randomUUID();
      const parent = randomUUID();
      customers.push(`${customer}\t${organizationId}\tproduction\t${prefix}-C-${i}\tCustomer ${i}\tc${i}@mail.debt-collection.example`);
      addresses.push(`${customer}\t${organizationId}\tproduction\t${i} Oak Hollow Dr\tAustin\tTX\t78704\tt`);
      const account = (id: string, parentId: string, key: string, balance: number, current: number) =>
        `${id}\t${organizationId}\tproduction\t${customer}\t${location}\t${parentId}\t${key}\t${balance}\t${current}`;
      accounts.push(account(parent, '\\N', `${prefix}-P-${i}`, 12500, 10000));
      accounts.push(account(randomUUID(), parent, `${prefix}-A-${i}`, 10000, 7500));
      accounts.push(account(randomUUID(), parent, `${prefix}-B-${i}`, 2500, 2500));
    }
    await copy(client, 'customers', ['id', 'organization_id', 'environment', 'external_id', 'name', 'email'], customers);
    await copy(client, 'customer_addresses', ['customer_id', 'organization_id', 'environment', 'line1', 'city', 'state', 'postal_code', 'is_primary'], addresses);
    await copy(client, 'debt_accounts', ['id', 'organization_id', 'environment', 'customer_id', 'location_id', 'parent_id', 'external_id', 'balance', 'current_balance'], accounts);
    await client.query('COMMIT');
    return performance.now() - started;
  } finally {
    client.release();
  }
}

/**
 * What the import must write besides the rows, written again by a plain COPY: the rows of
 * `table` that this round's import wrote for the organization (the same values, as stored),
 * into a table shaped and indexed as `table` (`LIKE … INCLUDING ALL`), emptied first. For the
 * event log (every change is an event) and the bulk rows (the job's durable input, what lets an
 * import killed half way go on). Answers the COPY's time and the number of rows.
 */
async function copyAgain(pool: pg.Pool, table: string, columns: string[], organizationId: string): Promise<{ ms: number; rows: number }> {
  const client = await pool.connect();
  try {
    const floor = `bench_floor_${table}`;
    await client.query(`CREATE TABLE IF NOT EXISTS ${floor} (LIKE ${table} INCLUDING ALL)`);
    await client.query(`TRUNCATE ${floor}`);
    const chunks: Buffer[] = [];
    await pipeline(client.query(copyTo(`COPY (SELECT ${columns.join(', ')} FROM ${table} WHERE organization_id = '${organizationId}') TO STDOUT`)), async function* (source: AsyncIterable<Buffer>) {
      for await (const chunk of source) chunks.push(chunk);
    });
    // COPY's text format escapes a newline inside a value, so each line is one row.
    const lines = Buffer.concat(chunks).toString('utf8').split('\n').slice(0, -1);
    const started = performance.now();
    await client.query('BEGIN');
    await copy(client, floor, columns, lines);
    await client.query('COMMIT');
    return { ms: performance.now() - started, rows: lines.length };
  } finally {
    client.release();
  }
}

/** The text with every parenthesised part emptied, innermost first: `a (b (c)) d` is `a () d`. */
function withoutParentheses(text: string): string {
  for (let emptied = text.replace(/\([^()]*\)/g, '()'); emptied !== text; emptied = text.replace(/\([^()]*\)/g, '()')) text = emptied;
  return text;
}

/** A statement's kind: its verb and table, or its first words. */
function statementKind(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim();
  // A write inside a WITH (the event log and outbox, webhook-repo.ts): named by its first write.
  const written = /^with \w+ as \( ?(insert into|update|delete from) "?([\w.]+)"?/i.exec(text);
  if (written) return `${written[1]!.split(' ')[0]!.toLowerCase()} ${written[2]} (with)`;
  // A select is named by its own FROM, not by one inside a sub-select of its columns (an
  // EXISTS (SELECT 1 FROM payment_plans …) among an account read's columns): those are left out.
  const table = /^(?:with .*?\) )?(insert into|update|delete from|copy|select .*? from) "?([\w.]+)"?/i.exec(/^select /i.test(text) ? withoutParentheses(text) : text);
  return table ? `${table[1]!.split(' ')[0]!.toLowerCase()} ${table[2]}` : text.slice(0, 60);
}

async function main(): Promise<void> {
  const scratch = await openScratchDatabase('bench', 10);
  const { db } = scratch;
  const url = new URL(scratch.url);
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
  let server: Server | undefined;
  let workers: Workers | undefined;
  const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
  const boss = await (async () => {
    return startQueue(url.toString(), logger);
  })();
  // Statements by kind while a round runs (the polls' own texts left out), and the events' recording.
  let counting = false;
  let capturingPoll = false;
  // Declared before the statements' timer below, which reads them (set by the recorder further down).
  let recording = 0;
  let recordingSqlMs = 0;
  let eventLogMs = 0;
  const polls = new Set<string>();
  const kinds = new Map<string, { count: number; ms: number }>();
  timeStatements((sql, took) => {
    if (capturingPoll) polls.add(sql);
    if (!counting || polls.has(sql)) return;
    const kind = statementKind(sql);
    if (recording > 0) {
      recordingSqlMs += took;
      if (kind.startsWith('insert webhook_events')) eventLogMs += took;
    }
    const entry = kinds.get(kind) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += took;
    kinds.set(kind, entry);
  });
  // The events' recording: in all, its statements (the payloads' reads and the event log's
  // insert) from sent to answered, and that insert alone; the rest is this process's work
  // (payloads built, serialized and compressed) and its waits.
  let recordingMs = 0;
  const events = webhookEvents(boss);
  const timedEvents: typeof events = {
    async record(trx, tenant, recorded) {
      const started = performance.now();
      recording += 1;
      try {
        return await events.record(trx, tenant, recorded);
      } finally {
        recording -= 1;
        recordingMs += performance.now() - started;
      }
    },
  };
  try {
    const deps = { config: { ...loadConfig({ PORT: '0' }), rateLimitPerMinute: 1_000_000 }, db, logger, secrets: new SecretBox(randomBytes(32)), boss, clock: () => new Date(), events: timedEvents, files: diskFileStore(loadConfig({}).dataDir) };
    workers = await startWorkers(deps);
    server = await listen(createApp(deps), 0, '127.0.0.1');
    const address = server.address();
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${API_BASE}`;

    const service: number[] = [];
    const answered: number[] = [];
    const copies: number[] = [];
    const eventCopies: number[] = [];
    const inputCopies: number[] = [];
    let eventCount = 0;
    const perRound: { statements: number; recording: number; recordingSql: number; eventLog: number; kinds: Map<string, { count: number; ms: number }> }[] = [];
    for (let round = 0; round <= Number(options.rounds); round++) {
      const organization = await createOrganization(db, `Bench ${round}`);
      const api = createApiClient({ baseUrl, token: organization.production_token });
      const body = items(`S${round}`);
      kinds.clear();
      recordingMs = 0;
      recordingSqlMs = 0;
      eventLogMs = 0;
      counting = true;
      const started = performance.now();
      const { data } = await api.POST('/bulk', { body });
      const id = data!.data.bulk_id;
      const accepted = performance.now() - started;
      for (;;) {
        const progress = await api.GET('/bulk/{id}', { params: { path: { id } } });
        if (progress.data!.data.status === 'completed') {
          if (progress.data!.data.failed !== 0) throw new Error('rows failed');
          break;
        }
        await new Promise((done) => setTimeout(done, 10));
      }
      const elapsed = performance.now() - started;
      counting = false;
      if (round === 0) {
        // The statements of one progress poll, to leave out of the counts from now on.
        capturingPoll = true;
        await api.GET('/bulk/{id}', { params: { path: { id } } });
        capturingPoll = false;
      }
      const copied = await copyBaseline(pool, organization.organization_id, `C${round}`);
      const eventsCopied = await copyAgain(pool, 'webhook_events', ['id', 'organization_id', 'environment', 'name', 'object_id', 'sequence', 'occurred_at', 'body'], organization.organization_id);
      const inputCopied = await copyAgain(pool, 'bulk_rows', ['bulk_action_id', 'position', 'organization_id', 'environment', 'payload', 'status', 'errors', 'processed_at'], organization.organization_id);
      if (round === 0) continue; // warm-up
      eventCopies.push(eventsCopied.ms);
      inputCopies.push(inputCopied.ms);
      eventCount = eventsCopied.rows;
      service.push(elapsed);
      answered.push(accepted);
      copies.push(copied);
      perRound.push({
        statements: [...kinds.values()].reduce((sum, kind) => sum + kind.count, 0),
        recording: recordingMs,
        recordingSql: recordingSqlMs,
        eventLog: eventLogMs,
        kinds: new Map(kinds),
      });
      const phases = [...kinds.entries()].sort((a, b) => b[1].ms - a[1].ms);
      console.log(
        `round ${round}: ${elapsed.toFixed(0)} ms (POST answered ${accepted.toFixed(0)}), COPY ${copied.toFixed(0)} ms; ${((perRound.at(-1)!.statements * 1000) / ROWS).toFixed(0)} statements per 1,000 rows; events recorded in ${recordingMs.toFixed(0)} ms (their statements ${recordingSqlMs.toFixed(0)}, of which the event log's insert ${eventLogMs.toFixed(0)})`,
      );
      for (const [kind, { count, ms }] of phases.slice(0, 12)) console.log(`    ${count.toString().padStart(5)} × ${ms.toFixed(1).padStart(8)} ms  ${kind}`);
    }
    const s = median(service);
    const c = median(copies);
    console.log(`${ROWS} customers, each with an address, a parent and two children: ${options.rounds} rounds, medians`);
    console.log(`POST /bulk to completed   ${s.toFixed(0).padStart(6)} ms   (min ${Math.min(...service).toFixed(0)}, max ${Math.max(...service).toFixed(0)})`);
    // Of which the answer to the POST (the rows stored and the job queued): the rest is the job.
    console.log(`  of which POST answered  ${median(answered).toFixed(0).padStart(6)} ms   (min ${Math.min(...answered).toFixed(0)}, max ${Math.max(...answered).toFixed(0)})`);
    console.log(`plain COPY of the rows    ${c.toFixed(0).padStart(6)} ms   (min ${Math.min(...copies).toFixed(0)}, max ${Math.max(...copies).toFixed(0)})`);
    console.log(`ratio service / COPY      ${(s / c).toFixed(2).padStart(6)}`);
    console.log(`statements per 1,000 rows ${median(perRound.map((round) => (round.statements * 1000) / ROWS)).toFixed(0).padStart(6)}   (the polls left out)`);
    const recorded = median(perRound.map((round) => round.recording));
    const recordedSql = median(perRound.map((round) => round.recordingSql));
    const eventLog = median(perRound.map((round) => round.eventLog));
    console.log(`events recorded in        ${recorded.toFixed(0).padStart(6)} ms (payloads read and built, event log and outbox written)`);
    console.log(`  their statements        ${recordedSql.toFixed(0).padStart(6)} ms (payloads' reads and the event log's insert, sent to answered), of which the insert ${eventLog.toFixed(0)} ms`);
    console.log(`  the rest                ${(recorded - recordedSql).toFixed(0).padStart(6)} ms (this process: payloads built, serialized and compressed, and its waits)`);
    // What bounds the ratio: the events alone against COPY, and the import without them.
    console.log(`bound: the events alone   ${(recorded / c).toFixed(2).padStart(6)} × COPY; the import without them ${((s - recorded) / c).toFixed(2)} × COPY; the event log's insert alone ${(eventLog / c).toFixed(2)} × COPY`);
    // The least any import can take that keeps its input (so that one killed half way goes on)
    // and records its events: the rows, the events and the input, each by COPY, nothing else.
    const events = median(eventCopies);
    const input = median(inputCopies);
    console.log(`floor: the rows, their ${eventCount} events and the import's input, each by COPY   ${((c + events + input) / c).toFixed(2)} × COPY of the rows (the events ${(events / c).toFixed(2)}, the input ${(input / c).toFixed(2)}; goal <= 1.5)`);
  } finally {
    await new Promise((done) => (server ? server.close(done) : done(undefined)));
    await workers?.stop();
    await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    await pool.end();
    await scratch.close();
  }
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
