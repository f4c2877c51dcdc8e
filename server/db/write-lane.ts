/**
 * Reads never wait behind writes for a pooled connection. Work run in the write lane
 * (`inWriteLane`: every API request but a GET, so a hundred charges in flight) holds or waits
 * for at most `pool - READ_RESERVE` of the pool's connections at once; the last READ_RESERVE are
 * only ever taken by work outside the lane (reads). Writes queue in the lane, in the order
 * asked, not in the pool's own queue ahead of the reads. The lane follows the work through its
 * awaits (AsyncLocalStorage), and a transaction is one acquisition for its whole length. Work
 * that already holds one of the lane's connections (a statement on the pool inside its own
 * transaction) takes another without waiting in the lane, so it can never wait on itself.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';

/** The connections of a pool that writes leave to reads. */
export const READ_RESERVE = 3;

/** One piece of work in the lane: how many of the lane's connections it holds. */
interface InLane {
  held: number;
}

const lane = new AsyncLocalStorage<InLane>();

/** Runs `work` (and all it awaits) in the write lane. */
export function inWriteLane<T>(work: () => T): T {
  return lane.run({ held: 0 }, work);
}

interface PoolClient {
  acquireConnection(): Promise<object>;
  releaseConnection(connection: object): Promise<void>;
}

/** Limits the write lane of `db` to `width` connections held or waited for at once. */
export function limitWriteLane(db: Knex, width: number): void {
  const client = db.client as PoolClient;
  const acquire = client.acquireConnection.bind(client);
  const release = client.releaseConnection.bind(client);
  const holders = new WeakMap<object, InLane>();
  const waiting: (() => void)[] = [];
  let used = 0;
  const free = () => {
    const next = waiting.shift();
    if (next) next();
    else used -= 1;
  };
  client.acquireConnection = async () => {
    const work = lane.getStore();
    if (!work || work.held > 0) return acquire();
    if (used < width) used += 1;
    else await new Promise<void>((granted) => waiting.push(granted));
    try {
      const connection = await acquire();
      holders.set(connection, work);
      work.held += 1;
      return connection;
    } catch (error) {
      free();
      throw error;
    }
  };
  client.releaseConnection = (connection) => {
    const work = holders.get(connection);
    if (work) {
      holders.delete(connection);
      work.held -= 1;
      free();
    }
    return release(connection);
  };
}
