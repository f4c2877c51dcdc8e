/**
 * The pool's connections go first to what a person waits on. Work run with `yieldingPool` (the
 * API's charges: a hundred at once, each a few statements) always gets up to `GUARANTEED`
 * connections, and beyond them every connection nobody else asks for, but a statement of any other
 * work never queues behind its hundred: when a connection comes back, it goes to the oldest other
 * request first (once yielding work holds its guaranteed few, and `OTHERS_PER_YIELDING` of them
 * at a time, so that yielding work is never starved), and yielding work keeps `RESERVED`
 * connections free for the others even while none is asked. A read of `GET /debt-accounts/{id}`
 * then waits at most for the next connection to come back, not for the hundred charges'
 * statements asked before it.
 *
 * The order is kept in front of the pool (knex's tarn pool answers in the order asked), by
 * permits: one per connection, taken before the pool is asked and given back on release.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const yielding = new AsyncLocalStorage<boolean>();

/** Runs `work` (and all it starts) with its statements asking for connections after any other work's. */
export function yieldingPool<T>(work: () => T): T {
  return yielding.run(true, work);
}

/** Connections yielding work leaves to the others at all times. */
const RESERVED = 2;
/** Connections yielding work gets whenever it asks, whatever else waits. */
const GUARANTEED = 4;
/** Beyond those, while both wait, other work gets this many connections for each one yielding work gets: neither starves. */
const OTHERS_PER_YIELDING = 3;

interface PooledClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<void>;
}

/** How long each acquisition waited for its permit, in ms, by whether it was yielding (for benchmarks). */
export type PermitWaits = (yieldingWork: boolean, ms: number) => void;

const watchers = new WeakMap<object, PermitWaits>();

/** Tells `watch` how long each acquisition on `client`'s pool waits for its permit. */
export function watchPermitWaits(client: object, watch: PermitWaits | undefined): void {
  if (watch) watchers.set(client, watch);
  else watchers.delete(client);
}

/** Puts the order above in front of `client`'s pool of `size` connections. */
export function prioritizePool(client: PooledClient, size: number): void {
  const acquire = client.acquireConnection.bind(client);
  const release = client.releaseConnection.bind(client);
  let free = size;
  const yieldingShare = Math.max(1, size - RESERVED);
  let yieldingHeld = 0;
  const first: (() => void)[] = [];
  const after: (() => void)[] = [];
  const held = new Map<unknown, boolean>();

  const yieldingFloor = Math.min(GUARANTEED, yieldingShare);
  /** Permits given to other work in a row while yielding work waited within its share. */
  let othersInARow = 0;
  /**
   * Gives the permits that are free: yielding work up to its guaranteed few first; then other
   * work, OTHERS_PER_YIELDING at a time before one to yielding work while both wait (so neither
   * starves); yielding work never beyond its share.
   */
  const grant = () => {
    while (free > 0) {
      const yieldingMay = after.length > 0 && yieldingHeld < yieldingShare;
      if (yieldingMay && (yieldingHeld < yieldingFloor || first.length === 0 || othersInARow >= OTHERS_PER_YIELDING)) {
        free -= 1;
        yieldingHeld += 1;
        othersInARow = 0;
        after.shift()!();
      } else if (first.length > 0) {
        free -= 1;
        if (yieldingMay) othersInARow += 1;
        first.shift()!();
      } else return;
    }
  };

  client.acquireConnection = async () => {
    const isYielding = yielding.getStore() === true;
    const asked = performance.now();
    await new Promise<void>((granted) => {
      (isYielding ? after : first).push(granted);
      grant();
    });
    watchers.get(client)?.(isYielding, performance.now() - asked);
    try {
      const connection = await acquire();
      held.set(connection, isYielding);
      return connection;
    } catch (error) {
      giveBack(isYielding);
      throw error;
    }
  };

  const giveBack = (wasYielding: boolean) => {
    free += 1;
    if (wasYielding) yieldingHeld -= 1;
    grant();
  };

  client.releaseConnection = async (connection) => {
    const wasYielding = held.get(connection);
    // Released twice, or never acquired here: no permit to give back.
    if (wasYielding !== undefined) {
      held.delete(connection);
      giveBack(wasYielding);
    }
    return release(connection);
  };
}
