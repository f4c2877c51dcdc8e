/**
 * IANA time zones, from the tz database Node ships (Intl): whether a name exists, its
 * canonical spelling, and local wall time in a zone. No table of our own: the runtime's
 * database is updated with Node.
 */

/** The canonical name of `name` (matched without regard to case), or undefined when unknown. */
export function canonicalTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** The wall clock in `timeZone` at `instant`. */
export function wallTime(instant: Date, timeZone: string): WallTime {
  const parts = Object.fromEntries(formatFor(timeZone).formatToParts(instant).map((part) => [part.type, Number(part.value)]));
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** The instant at which `timeZone`'s wall clock shows the given date and time (DST included). */
export function instantOf(wall: WallTime, timeZone: string): Date {
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  // The zone's offset at a first guess, then again at the corrected instant (a DST change between them).
  let instant = asUtc;
  for (let i = 0; i < 2; i += 1) {
    const seen = wallTime(new Date(instant), timeZone);
    const offset = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, seen.minute, seen.second) - instant;
    instant = asUtc - offset;
  }
  return new Date(instant);
}
