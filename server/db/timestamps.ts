/**
 * timestamptz values read as the driver reads them (pg-types' parser, postgres-date), in a fifth
 * of its time for the text PostgreSQL writes in a UTC session: `YYYY-MM-DD HH:MM:SS[.ffffff]+00`.
 * postgres-date runs three regular expressions and five parseInt per value, and the due work
 * reads a few hundred timestamps per instalment (the rows its events' payloads show): about
 * 0.4 µs and a match array each. Any other text (another offset, BC, infinity, a year before
 * 100 or after 9999) goes to the driver's parser; the text taken here gives the same Date, by
 * the same Date.UTC arguments (the fraction by the same `1000 * parseFloat`).
 */
import pg from 'pg';

const driverParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

const ZERO = 48;
const NINE = 57;

/** The number of the digits at [from, to) of `text`; NaN when one is not a digit. */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let at = from; at < to; at += 1) {
    const code = text.charCodeAt(at);
    if (code < ZERO || code > NINE) return Number.NaN;
    value = value * 10 + (code - ZERO);
  }
  return value;
}

/** The separators of `YYYY-MM-DD HH:MM:SS` at their places. */
function separated(text: string): boolean {
  return (
    text.charCodeAt(4) === 45 /* - */ &&
    text.charCodeAt(7) === 45 &&
    text.charCodeAt(10) === 32 /* space */ &&
    text.charCodeAt(13) === 58 /* : */ &&
    text.charCodeAt(16) === 58
  );
}

export function parseTimestamptz(text: string): Date {
  const length = text.length;
  // `+00` last; 19 characters of date and time before it, or those, a point and the fraction's digits.
  if (length >= 22 && text.endsWith('+00') && separated(text) && (length === 22 || (length >= 24 && text.charCodeAt(19) === 46 /* . */))) {
    const year = digits(text, 0, 4);
    const month = digits(text, 5, 7);
    const day = digits(text, 8, 10);
    const hour = digits(text, 11, 13);
    const minute = digits(text, 14, 16);
    const second = digits(text, 17, 19);
    const fraction = length === 22 ? 0 : digits(text, 20, length - 3);
    // NaN fails every comparison: a character out of place goes to the driver's parser.
    if (year >= 100 && month >= 0 && day >= 0 && hour >= 0 && minute >= 0 && second >= 0 && fraction >= 0) {
      const ms = length === 22 ? 0 : 1000 * parseFloat(text.slice(19, length - 3));
      return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
    }
  }
  return driverParse(text);
}
