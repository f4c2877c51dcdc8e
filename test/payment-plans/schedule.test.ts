import { afterFailure, chargeDate, instalmentCount, schedule } from '../../server/payment-plans/schedule';
import { dueAt } from '../../server/kernel/dates';

const dates = (frequency: Parameters<typeof chargeDate>[0], start: string, n: number) =>
  Array.from({ length: n }, (_, i) => chargeDate(frequency, start, i));

describe('charge dates', () => {
  test('weekly crosses a month end and the leap day of 2028', () => {
    expect(dates('weekly', '2028-02-15', 4)).toEqual(['2028-02-15', '2028-02-22', '2028-02-29', '2028-03-07']);
    expect(dates('weekly', '2026-12-24', 3)).toEqual(['2026-12-24', '2026-12-31', '2027-01-07']);
  });

  test('every other week crosses February in a leap year and in a common year', () => {
    expect(dates('every_other_week', '2028-02-20', 3)).toEqual(['2028-02-20', '2028-03-05', '2028-03-19']);
    expect(dates('every_other_week', '2027-02-20', 2)).toEqual(['2027-02-20', '2027-03-06']);
  });

  test('monthly keeps the day of month, clamped to a shorter month, and does not drift after it', () => {
    expect(dates('monthly', '2027-01-31', 4)).toEqual(['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']);
    expect(dates('monthly', '2028-01-31', 2)).toEqual(['2028-01-31', '2028-02-29']);
    expect(dates('monthly', '2026-11-30', 4)).toEqual(['2026-11-30', '2026-12-30', '2027-01-30', '2027-02-28']);
    expect(dates('monthly', '2026-12-15', 2)).toEqual(['2026-12-15', '2027-01-15']);
  });

  test('monthly from a leap day: the 29th where it exists, the 28th in a common February', () => {
    expect(dates('monthly', '2028-02-29', 13)).toEqual([
      '2028-02-29', '2028-03-29', '2028-04-29', '2028-05-29', '2028-06-29', '2028-07-29', '2028-08-29',
      '2028-09-29', '2028-10-29', '2028-11-29', '2028-12-29', '2029-01-29', '2029-02-28',
    ]);
  });

  test('last_of_month uses each month\'s last day, from the start date\'s month', () => {
    expect(dates('last_of_month', '2027-12-10', 4)).toEqual(['2027-12-31', '2028-01-31', '2028-02-29', '2028-03-31']);
    expect(dates('last_of_month', '2027-01-31', 3)).toEqual(['2027-01-31', '2027-02-28', '2027-03-31']);
  });
});

describe('amounts', () => {
  test('equal instalments and the remainder last', () => {
    const plan = schedule({ frequency: 'weekly', start: '2026-12-01', amount: 10_000, total: 25_050 });
    expect(plan.map((i) => i.amount)).toEqual([10_000, 10_000, 5_050]);
    expect(plan.reduce((sum, i) => sum + i.amount, 0)).toBe(25_050);
  });

  test('a total that divides evenly has no smaller last instalment', () => {
    expect(schedule({ frequency: 'monthly', start: '2026-12-01', amount: 5_000, total: 15_000 }).map((i) => i.amount)).toEqual([5_000, 5_000, 5_000]);
  });

  test('an amount at or above the total is one instalment of the total', () => {
    expect(schedule({ frequency: 'monthly', start: '2026-12-01', amount: 9_999, total: 1 })).toEqual([{ index: 0, date: '2026-12-01', amount: 1 }]);
    expect(instalmentCount(0, 100)).toBe(0);
  });
});

describe('run hour and retries', () => {
  test('the work of a date runs at 14:00 UTC', () => {
    expect(dueAt('2026-12-01').toISOString()).toBe('2026-12-01T14:00:00.000Z');
  });

  test('a failed attempt is retried 3 and 6 days after the charge date, then the plan defaults', () => {
    expect(afterFailure({ attempts: 1, consecutiveFailures: 1, chargeDate: '2026-12-30' })).toEqual({ retryAt: new Date('2027-01-02T14:00:00.000Z'), defaulted: false });
    expect(afterFailure({ attempts: 2, consecutiveFailures: 2, chargeDate: '2026-12-30' })).toEqual({ retryAt: new Date('2027-01-05T14:00:00.000Z'), defaulted: false });
    expect(afterFailure({ attempts: 3, consecutiveFailures: 3, chargeDate: '2026-12-30' })).toEqual({ retryAt: null, defaulted: true });
  });
});
