/**
 * Group commit: items handed in one by one (each instalment of the due work, each answer of the
 * gateway) are carried out together, up to `max` at once, in one short
 * transaction. While a batch runs, what arrives waits for the next; an idle batcher starts at
 * the next turn of the event loop, so items handed in together go together. Under little load a
 * batch holds one item (no waiting added); under load, many (one transaction, one lock pass,
 * one events record for them all).
 *
 * `run` answers each item's own result in order, an Error for an item that failed alone. When the
 * whole batch throws (a deadlock, a rule of one item that rolls everything back), each of its
 * items is run again alone, so one bad item fails only itself.
 */
export type BatchRun<I, O> = (items: I[]) => Promise<(O | Error)[]>;

export interface Batcher<I, O> {
  add(item: I): Promise<O>;
}

interface Waiting<I, O> {
  item: I;
  done: (result: O) => void;
  failed: (error: unknown) => void;
}

/** Items per batch by default: enough to share one transaction, few enough to keep it short. */
export const DUE_BATCH = 64;

export function batcher<I, O>(run: BatchRun<I, O>, { max = DUE_BATCH, parallel = 2 }: { max?: number; parallel?: number } = {}): Batcher<I, O> {
  const waiting: Waiting<I, O>[] = [];
  let running = 0;
  let scheduled = false;

  const settle = (entries: Waiting<I, O>[], results: (O | Error)[]) => {
    entries.forEach((entry, index) => {
      const result = results[index];
      if (result instanceof Error) entry.failed(result);
      else entry.done(result as O);
    });
  };

  async function runBatch(entries: Waiting<I, O>[]): Promise<void> {
    try {
      settle(entries, await run(entries.map((entry) => entry.item)));
    } catch (error) {
      if (entries.length === 1) {
        entries[0]!.failed(error);
        return;
      }
      // One at a time, each in its own transaction: the batch's failure is then only its own item's.
      for (const entry of entries) {
        try {
          settle([entry], await run([entry.item]));
        } catch (alone) {
          entry.failed(alone);
        }
      }
    }
  }

  function pump(): void {
    scheduled = false;
    while (running < parallel && waiting.length > 0) {
      const entries = waiting.splice(0, max);
      running += 1;
      void runBatch(entries).finally(() => {
        running -= 1;
        pump();
      });
    }
  }

  return {
    add(item) {
      return new Promise<O>((done, failed) => {
        waiting.push({ item, done, failed });
        if (!scheduled && running < parallel) {
          scheduled = true;
          setImmediate(pump);
        }
      });
    },
  };
}
