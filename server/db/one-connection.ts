/**
 * A read of many statements on one pooled connection, its statements pipelined: `work` gets a
 * Knex whose every statement runs on that one connection, and the statements it starts at once
 * (concurrently()) are written to PostgreSQL together, without waiting for each other's answers
 * (node-postgres' pipeline mode: each statement still its own implicit transaction, with its own
 * Sync, so one failing fails alone). The read then waits once for a pooled connection instead of
 * once per statement: under load each wait is a turn in the pool's queue, behind the statements
 * of everything else (GET /debt-accounts/{id} made about 13 of them).
 *
 * Only for reads outside a transaction (inside one, `work` runs on the transaction as it is), and
 * only for plain statements: a cursor or a COPY cannot share a pipelined connection (node-postgres
 * refuses them there).
 */
import type { Knex } from 'knex';
import { once } from 'node:events';

// knex's own way of making a Knex around a client (as its transactions do).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const makeKnex = require('knex/lib/knex-builder/make-knex.js') as (client: unknown) => Knex;

/** The parts of node-postgres' Client this relies on: its pipeline switch and its queues. */
interface PgConnection {
  pipeline: boolean;
  readyForQuery: boolean;
  _activeQuery: unknown;
  _queryQueue: unknown[];
  _sentQueryQueue: unknown[];
  once(event: 'drain', listener: () => void): unknown;
}

type KnexClient = Knex['client'] & { emit(event: string, ...args: unknown[]): boolean; on(event: string, listener: (...args: unknown[]) => void): unknown };

/** A Knex on each pooled connection, made once per connection (knex's make is not free). */
const bound = new WeakMap<object, Knex>();

/** A Knex whose statements all run on `connection`, reporting its events as `db`'s. */
function boundTo(db: Knex, connection: PgConnection): Knex {
  const known = bound.get(connection);
  if (known) return known;
  const parent = db.client as KnexClient;
  const client = Object.create(Object.getPrototypeOf(parent)) as KnexClient & Record<string, unknown>;
  for (const key of ['version', 'config', 'driver', 'connectionSettings', 'valueForUndefined', 'logger'] as const) client[key] = (parent as unknown as Record<string, unknown>)[key];
  for (const event of ['start', 'query', 'query-error', 'query-response']) client.on(event, (...args: unknown[]) => parent.emit(event, ...args));
  client.acquireConnection = async () => connection;
  client.releaseConnection = async () => {};
  const knex = makeKnex(client);
  bound.set(connection, knex);
  return knex;
}

/** Whether the connection has nothing written, queued or being answered. */
const idle = (connection: PgConnection) => !connection._activeQuery && connection._queryQueue.length === 0 && connection._sentQueryQueue.length === 0;

export async function onOneConnection<T>(db: Knex, work: (db: Knex) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  const connection = (await db.client.acquireConnection()) as PgConnection;
  connection.pipeline = true;
  try {
    return await work(boundTo(db, connection));
  } finally {
    // A statement that failed fails `work` at once; the others it started are still answered
    // first, before the connection goes back to its ordinary one-at-a-time mode and to the pool.
    // (A connection that ends or fails meanwhile is the pool's to drop: knex checks it on acquire.)
    if (!idle(connection)) {
      const events = connection as unknown as NodeJS.EventEmitter;
      await Promise.race([once(events, 'drain'), once(events, 'end')]).catch(() => {});
    }
    connection.pipeline = false;
    await db.client.releaseConnection(connection);
  }
}
