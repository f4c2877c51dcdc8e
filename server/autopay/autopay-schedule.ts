/**
 * When autopay runs: on its day of each month at the hour every due payment runs (14:00 UTC,
 * when every US zone is on that date). Days 1 to 28 only, so every month has the day.
 */
import { RUN_HOUR_UTC } from '../kernel/dates';

export const FIRST_DAY = 1;
export const LAST_DAY = 28;

/** The first run on day `day` of a month strictly later than `after`. */
export function nextRunAfter(day: number, after: Date): Date {
  const year = after.getUTCFullYear();
  const month = after.getUTCMonth();
  const thisMonth = new Date(Date.UTC(year, month, day, RUN_HOUR_UTC));
  return thisMonth.getTime() > after.getTime() ? thisMonth : new Date(Date.UTC(year, month + 1, day, RUN_HOUR_UTC));
}

/** The month a run belongs to, `YYYY-MM`: with the account, the key of exactly once. */
export const monthOf = (runAt: Date): string => runAt.toISOString().slice(0, 7);
