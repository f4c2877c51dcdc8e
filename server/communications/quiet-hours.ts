/**
 * Quiet hours (12 CFR 1006.6(b)(1)(i)): a collector may not communicate before 8 a.m. or after
 * 9 p.m. at the consumer's location. Messages may leave from 08:00:00 up to, not including,
 * 21:00:00 local time (we count 21:00 itself as after 9 p.m.: a message leaving then arrives
 * after it).
 */
import { instantOf, wallTime } from '../time-zones';

export const FIRST_HOUR = 8;
export const LAST_HOUR = 21;

/** When a message may leave if it is quiet hours in `timeZone` at `now`; undefined when it may leave now. */
export function quietUntil(now: Date, timeZone: string): Date | undefined {
  const local = wallTime(now, timeZone);
  if (local.hour >= FIRST_HOUR && local.hour < LAST_HOUR) return undefined;
  // Before 08:00: today's 08:00; from 21:00: tomorrow's (the calendar day after, in that zone).
  const day = local.hour < FIRST_HOUR ? local : wallTime(new Date(Date.UTC(local.year, local.month - 1, local.day + 1, 12)), 'UTC');
  return instantOf({ year: day.year, month: day.month, day: day.day, hour: FIRST_HOUR, minute: 0, second: 0 }, timeZone);
}
