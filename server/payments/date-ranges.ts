/**
 * Tratta's named date ranges as UTC days: [first, last], both inclusive. Weeks start on
 * Monday; the `since_` ranges end today.
 */
export const DATE_RANGES = [
  'today', 'yesterday', 'this_week', 'last_week', 'this_month', 'last_month', 'this_year', 'last_year',
  'since_7_days_ago', 'since_30_days_ago', 'since_90_days_ago',
] as const;
export type DateRange = (typeof DATE_RANGES)[number];

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function dateRange(range: DateRange, now: Date): { first: string; last: string } {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const monday = today - ((now.getUTCDay() + 6) % 7) * DAY;
  switch (range) {
    case 'today':
      return { first: day(today), last: day(today) };
    case 'yesterday':
      return { first: day(today - DAY), last: day(today - DAY) };
    case 'this_week':
      return { first: day(monday), last: day(monday + 6 * DAY) };
    case 'last_week':
      return { first: day(monday - 7 * DAY), last: day(monday - DAY) };
    case 'this_month':
      return { first: day(Date.UTC(y, m, 1)), last: day(Date.UTC(y, m + 1, 0)) };
    case 'last_month':
      return { first: day(Date.UTC(y, m - 1, 1)), last: day(Date.UTC(y, m, 0)) };
    case 'this_year':
      return { first: `${y}-01-01`, last: `${y}-12-31` };
    case 'last_year':
      return { first: `${y - 1}-01-01`, last: `${y - 1}-12-31` };
    case 'since_7_days_ago':
      return { first: day(today - 7 * DAY), last: day(today) };
    case 'since_30_days_ago':
      return { first: day(today - 30 * DAY), last: day(today) };
    case 'since_90_days_ago':
      return { first: day(today - 90 * DAY), last: day(today) };
  }
}
