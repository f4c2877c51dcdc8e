/** Tratta's named ranges as UTC days, on a fixed Wednesday (2026-11-25) and around year ends. */
import { dateRange, DATE_RANGES } from '../../server/payments/date-ranges';

const wednesday = new Date('2026-11-25T23:59:59Z');

test.each([
  ['today', '2026-11-25', '2026-11-25'],
  ['yesterday', '2026-11-24', '2026-11-24'],
  ['this_week', '2026-11-23', '2026-11-29'],
  ['last_week', '2026-11-16', '2026-11-22'],
  ['this_month', '2026-11-01', '2026-11-30'],
  ['last_month', '2026-10-01', '2026-10-31'],
  ['this_year', '2026-01-01', '2026-12-31'],
  ['last_year', '2025-01-01', '2025-12-31'],
  ['since_7_days_ago', '2026-11-18', '2026-11-25'],
  ['since_30_days_ago', '2026-10-26', '2026-11-25'],
  ['since_90_days_ago', '2026-08-27', '2026-11-25'],
] as const)('%s is %s to %s', (range, first, last) => {
  expect(dateRange(range, wednesday)).toEqual({ first, last });
});

test('every documented range is computed', () => {
  expect(DATE_RANGES).toHaveLength(11);
});

test('on a Sunday the week is the one ending that day; in January last month is December of the year before', () => {
  expect(dateRange('this_week', new Date('2026-11-29T12:00:00Z'))).toEqual({ first: '2026-11-23', last: '2026-11-29' });
  expect(dateRange('last_month', new Date('2027-01-15T00:00:00Z'))).toEqual({ first: '2026-12-01', last: '2026-12-31' });
  expect(dateRange('yesterday', new Date('2027-01-01T00:00:00Z'))).toEqual({ first: '2026-12-31', last: '2026-12-31' });
});
