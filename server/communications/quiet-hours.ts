/**
 * Quiet hours (12 CFR 1006.6(b)(1)(i)): a collector may not communicate before 8 a.m. or after
 * 9 p.m. at the consumer's location, and where it knows of several locations (comment
 * 6(b)(1)(i)-1, or has conflicting facts) the time must be convenient in all of them. Messages
 * may leave from 08:00:00 up to, not including, 21:00:00 local time in every zone the customer
 * is known to be in (we count 21:00 itself as after 9 p.m.: a message leaving then arrives
 * after it). Zones that share no such hour (Guam and New York) leave at the hour the agency
 * chose, on the clock of the customer's primary zone.
 */
import { instantOf, wallTime } from '../kernel/time-zones';

export const FIRST_HOUR = 8;
export const LAST_HOUR = 21;

/** The days looked ahead for a shared hour: every offset pair repeats within a day, DST changes within two. */
const DAYS_AHEAD = 3;

const allowedIn = (instant: Date, timeZone: string): boolean => {
  const hour = wallTime(instant, timeZone).hour;
  return hour >= FIRST_HOUR && hour < LAST_HOUR;
};

/** `hour`:00 on the wall clock of `timeZone`, `days` calendar days after the local day of `from`. */
function localHour(from: Date, timeZone: string, days: number, hour: number): Date {
  const local = wallTime(from, timeZone);
  const day = wallTime(new Date(Date.UTC(local.year, local.month - 1, local.day + days, 12)), 'UTC');
  return instantOf({ year: day.year, month: day.month, day: day.day, hour, minute: 0, second: 0 }, timeZone);
}

export interface QuietRule {
  /** Every zone the customer is known to be in (at least one). */
  zones: string[];
  /** Where `noOverlapHour` is read when the zones share no allowed hour. */
  primaryZone: string;
  noOverlapHour: number;
}

/** When a message may leave if `now` is in quiet hours anywhere the customer is; undefined when it may leave now. */
export function quietUntil(now: Date, rule: QuietRule): Date | undefined {
  if (rule.zones.every((zone) => allowedIn(now, zone))) return undefined;
  // A window shared by every zone opens when the last of them reaches 08:00: one of their 08:00s.
  const openings = rule.zones
    .flatMap((zone) => Array.from({ length: DAYS_AHEAD + 1 }, (_, days) => localHour(now, zone, days, FIRST_HOUR)))
    .filter((instant) => instant.getTime() > now.getTime())
    .sort((a, b) => a.getTime() - b.getTime());
  const shared = openings.find((instant) => rule.zones.every((zone) => allowedIn(instant, zone)));
  if (shared) return shared;
  if (wallTime(now, rule.primaryZone).hour === rule.noOverlapHour) return undefined;
  const today = localHour(now, rule.primaryZone, 0, rule.noOverlapHour);
  return today.getTime() > now.getTime() ? today : localHour(now, rule.primaryZone, 1, rule.noOverlapHour);
}
