/**
 * Today's date in UTC, `YYYY-MM-DD`, at `now` (the app's clock, so tests can move it): what
 * "not in the future" and "today or later" compare with.
 */
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}
