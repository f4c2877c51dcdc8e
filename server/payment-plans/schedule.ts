/**
 * A plan's schedule as pure functions of its terms: which dates, which amounts. Dates are
 * calendar dates (`YYYY-MM-DD`) computed in UTC, never in the machine's zone, so a server in
 * any zone computes the same schedule.
 */
import { addDays, dueAt } from '../kernel/dates';
import { instalmentCount } from '../payment-terms/payment-terms';

export type Frequency = 'weekly' | 'every_other_week' | 'monthly' | 'last_of_month';

export interface Instalment {
  /** 0-based position within this schedule. */
  index: number;
  date: string;
  amount: number;
}


const parse = (date: string): Date => new Date(`${date}T00:00:00.000Z`);
const format = (date: Date): string => date.toISOString().slice(0, 10);

export { addDays };

/** The last day of the month `months` after the month of `date`. */
function lastDayOfMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function monthDate(start: string, months: number, day: number | 'last'): string {
  const base = parse(start);
  const year = base.getUTCFullYear();
  const month = base.getUTCMonth() + months;
  const last = lastDayOfMonth(year, month);
  return format(new Date(Date.UTC(year, month, day === 'last' ? last : Math.min(day, last))));
}

/** The `n`th (0-based) charge date of a plan starting on `start`. */
export function chargeDate(frequency: Frequency, start: string, n: number): string {
  switch (frequency) {
    case 'weekly':
      return addDays(start, 7 * n);
    case 'every_other_week':
      return addDays(start, 14 * n);
    // The day of month of the start date, clamped to each month's last day (never drifting:
    // a plan starting on the 31st charges on the 28th or 29th in February, then the 31st again).
    case 'monthly':
      return monthDate(start, n, parse(start).getUTCDate());
    case 'last_of_month':
      return monthDate(start, n, 'last');
  }
}

export { instalmentCount };

/**
 * Equal instalments of `amount`, the last one the remainder, until `total` is covered, on the
 * dates of `frequency` from `start` (from its `from`th date on: a recomputed plan keeps its
 * rhythm's position).
 */
export function schedule(terms: { frequency: Frequency; start: string; amount: number; total: number }): Instalment[] {
  const count = instalmentCount(terms.total, terms.amount);
  const instalments: Instalment[] = [];
  for (let index = 0; index < count; index += 1) {
    const amount = index === count - 1 ? terms.total - terms.amount * (count - 1) : terms.amount;
    instalments.push({ index, date: chargeDate(terms.frequency, terms.start, index), amount });
  }
  return instalments;
}

/** A failed attempt is tried again this many days later, at the run hour. */
export const RETRY_AFTER_DAYS = 3;
/** Attempts of one instalment: the first and two retries. */
export const MAX_ATTEMPTS = 3;
/** Failed attempts in a row (over any instalments) after which the plan defaults. */
export const FAILURES_TO_DEFAULT = 3;

/**
 * What follows a failed attempt: another attempt `RETRY_AFTER_DAYS` later while the instalment
 * has attempts left, and the plan defaults once `FAILURES_TO_DEFAULT` attempts in a row failed.
 */
export function afterFailure(state: { attempts: number; consecutiveFailures: number; chargeDate: string }): { retryAt: Date | null; defaulted: boolean } {
  const defaulted = state.consecutiveFailures >= FAILURES_TO_DEFAULT;
  if (defaulted || state.attempts >= MAX_ATTEMPTS) return { retryAt: null, defaulted };
  return { retryAt: dueAt(addDays(state.chargeDate, RETRY_AFTER_DAYS * state.attempts)), defaulted };
}
