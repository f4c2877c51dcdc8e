/**
 * The validation period of a debt (12 CFR 1006.34(b)(5)): it ends 30 days after the consumer
 * receives the validation notice, and the collector may assume receipt 5 days after sending it,
 * "excluding legal public holidays identified in 5 U.S.C. 6103(a), Saturdays, and Sundays". The
 * eleven holidays of 6103(a) fall on their observed days (6103(b) and Executive Order 11582):
 * one on a Saturday is kept on the Friday before, one on a Sunday on the Monday after. One-off
 * closures (a day given by executive order) are not counted: they cannot be known in advance.
 *
 * In the kernel because the debt account (a lower floor than disputes) shows the end date.
 * Dates are `YYYY-MM-DD` strings, computed in UTC so no zone shifts a day.
 */

const DAY_MS = 86_400_000;

const toDate = (day: string): Date => new Date(`${day}T00:00:00.000Z`);
const toDay = (date: Date): string => date.toISOString().slice(0, 10);
const plusDays = (date: Date, days: number): Date => new Date(date.getTime() + days * DAY_MS);

/** The `nth` (1-based) `weekday` (0 = Sunday) of `month` (0-based); nth -1: the last. */
function nthWeekday(year: number, month: number, weekday: number, nth: number): Date {
  if (nth > 0) {
    const first = new Date(Date.UTC(year, month, 1));
    return plusDays(first, ((weekday - first.getUTCDay() + 7) % 7) + (nth - 1) * 7);
  }
  const last = new Date(Date.UTC(year, month + 1, 0));
  return plusDays(last, -((last.getUTCDay() - weekday + 7) % 7));
}

/** A fixed-date holiday on the day it is observed. */
function observed(date: Date): Date {
  const weekday = date.getUTCDay();
  return weekday === 6 ? plusDays(date, -1) : weekday === 0 ? plusDays(date, 1) : date;
}

/** The eleven legal public holidays of 5 U.S.C. 6103(a) in `year`, on their observed days. */
export function federalHolidays(year: number): string[] {
  const fixed = (month: number, day: number) => observed(new Date(Date.UTC(year, month, day)));
  return [
    fixed(0, 1), // New Year's Day
    nthWeekday(year, 0, 1, 3), // Birthday of Martin Luther King, Jr.
    nthWeekday(year, 1, 1, 3), // Washington's Birthday
    nthWeekday(year, 4, 1, -1), // Memorial Day
    fixed(5, 19), // Juneteenth National Independence Day
    fixed(6, 4), // Independence Day
    nthWeekday(year, 8, 1, 1), // Labor Day
    nthWeekday(year, 9, 1, 2), // Columbus Day
    fixed(10, 11), // Veterans Day
    nthWeekday(year, 10, 4, 4), // Thanksgiving Day
    fixed(11, 25), // Christmas Day
  ].map(toDay);
}

/** Whether `date` is a Saturday, a Sunday or an observed federal holiday (of its year, or next year's New Year's Day kept on Dec 31). */
function isExcluded(date: Date): boolean {
  const weekday = date.getUTCDay();
  if (weekday === 0 || weekday === 6) return true;
  const year = date.getUTCFullYear();
  const day = toDay(date);
  return federalHolidays(year).includes(day) || federalHolidays(year + 1).includes(day);
}

/** Days a notice is assumed to take to arrive, counting neither weekends nor holidays. */
export const RECEIPT_DAYS = 5;
/** Days of the validation period after receipt. */
export const VALIDATION_DAYS = 30;

/** The day the notice sent on `sentOn` is assumed received: the 5th day after it that is not excluded. */
export function assumedReceiptOn(sentOn: string): string {
  let date = toDate(sentOn);
  for (let counted = 0; counted < RECEIPT_DAYS; ) {
    date = plusDays(date, 1);
    if (!isExcluded(date)) counted += 1;
  }
  return toDay(date);
}

/** The last day of the validation period of a notice sent on `sentOn`. */
export function validationPeriodEndsOn(sentOn: string): string {
  return toDay(plusDays(toDate(assumedReceiptOn(sentOn)), VALIDATION_DAYS));
}
