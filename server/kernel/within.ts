/** Bounded waits: a stop goes on past a part that does not end in time. */

/** Waits for `work` to settle, at most `ms` (Infinity: as long as it takes). */
export function within(ms: number, work: Promise<unknown> | undefined): Promise<void> {
  return new Promise((done) => {
    if (!Number.isFinite(ms)) return void Promise.resolve(work).then(() => done(), () => done());
    const timer = setTimeout(done, ms);
    void Promise.resolve(work).then(
      () => (clearTimeout(timer), done()),
      () => (clearTimeout(timer), done()),
    );
  });
}
