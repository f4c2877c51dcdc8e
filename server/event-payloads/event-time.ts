/**
 * The times of webhook payloads: `YYYY-MM-DD HH:MM:SS` in UTC (spec 6.1; the zone is our
 * decision) and `MM/DD/YYYY` (spec 6.4's `payment_date`). Every timestamp of every payload
 * goes through here, so the text is computed from the time's number (days since 1970 to a
 * civil date, H. Hinnant's algorithm) rather than by `toISOString()` and string edits, which
 * cost ten times as much; the last day's text is kept, as a batch's times share few days.
 * The text is byte for byte `toISOString()`'s: years 0000 to 9999 are computed, anything
 * else (an invalid date, which throws, or a year of six digits) is left to `toISOString()`.
 */

/** 0000-01-01T00:00:00.000Z and 10000-01-01T00:00:00.000Z: the years toISOString writes with four digits. */
const FIRST = -62167219200000;
const PAST_LAST = 253402300800000;
const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 60 }, (_, n) => (n < 10 ? `0${n}` : String(n)));

/** Year, month (1–12) and day of the month of a day counted from 1970-01-01 (negative before). */
function civil(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

let lastDay = Number.NaN;
let lastDate = '';
let lastPaymentDate = '';

/** The day's `YYYY-MM-DD` and `MM/DD/YYYY`, kept for the next time of the same day. */
function dayOf(days: number): void {
  if (days === lastDay) return;
  const [year, month, day] = civil(days);
  const yyyy = String(year).padStart(4, '0');
  lastDay = days;
  lastDate = `${yyyy}-${TWO[month]}-${TWO[day]}`;
  lastPaymentDate = `${TWO[month]}/${TWO[day]}/${yyyy}`;
}

/** `YYYY-MM-DD HH:MM:SS`, UTC (spec 6.1; the zone is our decision). */
export function eventTime(moment: Date): string {
  const time = moment.getTime();
  if (!(time >= FIRST && time < PAST_LAST)) return moment.toISOString().slice(0, 19).replace('T', ' ');
  const days = Math.floor(time / DAY_MS);
  dayOf(days);
  const seconds = Math.floor((time - days * DAY_MS) / 1000);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds - hours * 3600) / 60);
  return `${lastDate} ${TWO[hours]}:${TWO[minutes]}:${TWO[seconds - hours * 3600 - minutes * 60]}`;
}

/** `MM/DD/YYYY`, the UTC day (spec 6.4's `payment_date`). */
export function paymentDate(moment: Date): string {
  const time = moment.getTime();
  if (!(time >= FIRST && time < PAST_LAST)) {
    const iso = moment.toISOString();
    return `${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(0, 4)}`;
  }
  dayOf(Math.floor(time / DAY_MS));
  return lastPaymentDate;
}
