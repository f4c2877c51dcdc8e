/**
 * Today's date in UTC, `YYYY-MM-DD`, at `now` (the app's clock, so tests can move it): what
 * "not in the future" and "today or later" compare with.
 */
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

const DAY_MS = 86_400_000;

/** The calendar date `days` after `date` (both `YYYY-MM-DD`, in UTC). */
export function addDays(date: string, days: number): string {
  return new Date(new Date(`${date}T00:00:00.000Z`).getTime() + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whether `text` is a real calendar date written `YYYY-MM-DD`. */
export function isCalendarDate(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) && new Date(`${text}T00:00:00.000Z`).toISOString().startsWith(text);
}

/**
 * The hour (UTC) at which the work of a date is carried out: 14:00 UTC is 09:00 in New York
 * in winter and 04:00 in Honolulu, so every US zone is already on that calendar date.
 */
export const RUN_HOUR_UTC = 14;

/** When the work of a date (`YYYY-MM-DD`) is carried out: a plan's instalment, a scheduled charge. */
export function dueAt(date: string): Date {
  return new Date(new Date(`${date}T00:00:00.000Z`).getTime() + RUN_HOUR_UTC * 3_600_000);
}
