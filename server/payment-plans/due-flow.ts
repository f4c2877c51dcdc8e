/**
 * Due work as a flow, not in passes: up to `width` items in flight at once, and as soon as one
 * ends the next starts (a slow gateway answer holds back only its own slot, never a batch). The
 * items wait in one queue per tenant, and the tenants take turns: one organization's 100,000
 * due instalments do not hold back another's 10, which start among the first whatever the
 * backlog. A lane (a plan's instalments, an account's scheduled charges) has one item in flight
 * at a time, its items in due order. An item that will call a processor starts only when that
 * processor has room at its pace (`room`): the flow slows to the processor's rate instead of
 * reserving charges that would wait for it. The queue is refilled from the database (what is due now)
 * whenever it runs low; exactly once is the database's (each item's own transaction and key),
 * so an item found again, or taken by another process meanwhile, is simply found done.
 */

/** How the flow sees an item. */
export interface FlowOf<T> {
  /** At most this many items in flight at once. */
  width: number;
  /** What is due now, each tenant's earliest first (items already known may come again: they are skipped). */
  fetch: (known: number) => Promise<T[]>;
  keyOf: (item: T) => string;
  laneOf: (item: T) => string;
  tenantOf: (item: T) => string;
  /** Carries the item out; answers whether it did anything (false: not due any more, or it waits for something). */
  run: (item: T) => Promise<boolean>;
  /**
   * The room of what an item calls (its tenant's processor, at its pace): an item whose tenant
   * has none now is passed over, holding nothing (not started, nothing reserved), and the other
   * tenants go on; `onOpen` calls back when room may have opened.
   */
  room?: FlowRoom<T>;
}

export interface FlowRoom<T> {
  /** Whether the item may start now. */
  open: (item: T) => boolean;
  /** Takes the item's room as it starts (checked open); answers what gives it back, called when the item ends. */
  take: (item: T) => () => void;
  onOpen: (wake: () => void) => () => void;
}

/** Items waiting, one queue per tenant, the tenants taking turns (a tenant served goes to the back). */
export class TenantTurns<T> {
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  constructor(private readonly tenantOf: (item: T) => string) {}

  get size(): number {
    return this.count;
  }

  add(item: T): void {
    const tenant = this.tenantOf(item);
    const queue = this.queues.get(tenant);
    if (queue) queue.push(item);
    else this.queues.set(tenant, [item]);
    this.count += 1;
  }

  /**
   * The next tenant's first item that `free` allows (its lane not busy) and `open` lets start (a
   * tenant whose first such item may not start is passed over); undefined when none is.
   */
  next(free: (item: T) => boolean, open: (item: T) => boolean = () => true): T | undefined {
    for (const [tenant, queue] of this.queues) {
      const index = queue.findIndex(free);
      if (index < 0 || !open(queue[index]!)) continue;
      const [item] = queue.splice(index, 1);
      // To the back of the turns (or gone, when its queue is empty).
      this.queues.delete(tenant);
      if (queue.length > 0) this.queues.set(tenant, queue);
      this.count -= 1;
      return item;
    }
    return undefined;
  }
}

/**
 * Runs what is due until nothing new is (a refill that finds nothing new, with nothing in
 * flight); answers how many items did something. An item that did nothing is not tried again in
 * this run (the next run of the job finds it). An item that throws does not stop the others: the
 * first error is thrown once everything in flight has ended.
 */
export function flowDue<T>(flow: FlowOf<T>): Promise<number> {
  const { width, keyOf, laneOf, tenantOf } = flow;
  const turns = new TenantTurns<T>(tenantOf);
  /** Keys waiting or in flight; keys tried without effect in this run. */
  const known = new Set<string>();
  const tried = new Set<string>();
  const busyLanes = new Set<string>();
  /**
   * Keys whose items ended while the refill in progress was reading: its answer may have been
   * read before they ended (still due then), and must not bring them back (they would be found
   * done, in a start of their own); the next refill reads them as they are.
   */
  const endedWhileFetching = new Set<string>();
  let running = 0;
  let done = 0;
  let fetching = false;
  /** Whether a refill may still bring something: the last one did, or an item ended since. */
  let mayBringMore = true;
  let failure: unknown;

  return new Promise<number>((resolve, reject) => {
    const stopWaking = flow.room?.onOpen(() => pump());
    const finish = () => {
      stopWaking?.();
      if (failure === undefined) resolve(done);
      else reject(failure);
    };

    const start = (item: T) => {
      const giveBack = flow.room?.take(item);
      running += 1;
      busyLanes.add(laneOf(item));
      flow
        .run(item)
        .then(
          (ran) => {
            if (ran) done += 1;
            else tried.add(keyOf(item));
          },
          (error: unknown) => {
            failure ??= error;
            tried.add(keyOf(item));
          },
        )
        .finally(() => {
          giveBack?.();
          running -= 1;
          busyLanes.delete(laneOf(item));
          known.delete(keyOf(item));
          if (fetching) endedWhileFetching.add(keyOf(item));
          mayBringMore = true;
          pump();
        });
    };

    const refill = () => {
      fetching = true;
      mayBringMore = false;
      flow
        .fetch(known.size + tried.size)
        .then(
          (due) => {
            for (const item of due) {
              const key = keyOf(item);
              if (known.has(key) || tried.has(key) || endedWhileFetching.has(key)) continue;
              known.add(key);
              turns.add(item);
              mayBringMore = true;
            }
          },
          (error: unknown) => {
            failure ??= error;
          },
        )
        .finally(() => {
          fetching = false;
          endedWhileFetching.clear();
          pump();
        });
    };

    let finished = false;
    function pump(): void {
      if (finished) return;
      while (running < width) {
        const item = turns.next(
          (each) => !busyLanes.has(laneOf(each)),
          (each) => flow.room?.open(each) ?? true,
        );
        if (!item) break;
        start(item);
      }
      if (!fetching && mayBringMore && failure === undefined && turns.size < width) refill();
      if (!fetching && running === 0 && (turns.size === 0 || failure !== undefined)) {
        finished = true;
        finish();
      }
    }

    pump();
  });
}
