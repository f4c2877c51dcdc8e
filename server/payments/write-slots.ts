/**
 * Slots for the short transactions that move money (a charge's reservation and its answer's
 * record, an instalment's start): at most WRITE_SLOTS of them wait for or hold a pooled
 * connection at once in one process. A hundred charges in flight then queue here, not in the
 * pool's own queue, and the pool keeps connections free for everything else (the reads of
 * GET /debt-accounts/{id} above all): nothing starves while money moves. A slot is never taken
 * inside another (each is taken around a whole transaction, never within one).
 */

/** Of the pool's connections (20 by default, at least 10: config.ts's SERVER_POOL): the rest stay free for reads, jobs and the gateway's own requests. */
export const WRITE_SLOTS = 6;

export type Slots = <T>(work: () => Promise<T>) => Promise<T>;

/** A semaphore of `width` slots, taken in the order asked. */
export function slots(width: number): Slots {
  let used = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (used < width) used += 1;
    else await new Promise<void>((granted) => waiting.push(granted));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, or is freed.
      const next = waiting.shift();
      if (next) next();
      else used -= 1;
    }
  };
}

const processSlots: Slots = slots(WRITE_SLOTS);

/**
 * This process's slots for money's transactions on `db`. On a transaction already open (a caller
 * that charges inside its own), no slot is taken: the caller holds its connection already, and a
 * slot taken inside it could wait on one that waits for that connection.
 */
export function moneyWrites<T>(db: { isTransaction?: boolean }, work: () => Promise<T>): Promise<T> {
  return db.isTransaction ? work() : processSlots(work);
}
