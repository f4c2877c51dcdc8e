/** The validation period's dates (12 CFR 1006.34(b)(5), 5 U.S.C. 6103), table-driven across the holidays. */
import { assumedReceiptOn, federalHolidays, validationPeriodEndsOn } from '../../server/kernel/validation-period';

describe('federal holidays on their observed days', () => {
  test.each([
    [2026, ['2026-01-01', '2026-01-19', '2026-02-16', '2026-05-25', '2026-06-19', '2026-07-03', '2026-09-07', '2026-10-12', '2026-11-11', '2026-11-26', '2026-12-25']],
    [2027, ['2027-01-01', '2027-01-18', '2027-02-15', '2027-05-31', '2027-06-18', '2027-07-05', '2027-09-06', '2027-10-11', '2027-11-11', '2027-11-25', '2027-12-24']],
    // New Year's Day 2022 was a Saturday: kept on Friday Dec 31, 2021 (and not in 2022 itself).
    [2022, ['2021-12-31', '2022-01-17', '2022-02-21', '2022-05-30', '2022-06-20', '2022-07-04', '2022-09-05', '2022-10-10', '2022-11-11', '2022-11-24', '2022-12-26']],
  ])('%i', (year, days) => {
    expect(federalHolidays(year)).toEqual(days);
  });
});

describe('receipt 5 days after sending, not counting weekends and holidays; the period ends 30 days later', () => {
  test.each([
    // sent, assumed received, period ends, why
    ['2026-11-02', '2026-11-09', '2026-12-09', 'a plain week (Mon → next Mon)'],
    ['2026-11-06', '2026-11-16', '2026-12-16', 'Veterans Day (Wed Nov 11) is not counted'],
    ['2026-11-20', '2026-11-30', '2026-12-30', 'Thanksgiving (Thu Nov 26) is not counted'],
    ['2026-11-25', '2026-12-03', '2027-01-02', 'sent the day before Thanksgiving'],
    ['2026-11-26', '2026-12-03', '2027-01-02', 'sent on Thanksgiving itself: counting starts the day after'],
    ['2026-12-21', '2026-12-29', '2027-01-28', 'Christmas (Fri Dec 25) and the weekend are not counted'],
    ['2026-12-28', '2027-01-05', '2027-02-04', "New Year's Day (Fri Jan 1) is not counted"],
    ['2027-12-20', '2027-12-28', '2028-01-27', 'Christmas 2027 falls on a Saturday: Friday Dec 24 is not counted'],
    ['2021-12-27', '2022-01-04', '2022-02-03', "New Year's Day 2022 (a Saturday) kept on Friday Dec 31, 2021"],
    ['2026-11-07', '2026-11-16', '2026-12-16', 'sent on a Saturday, the week of Veterans Day'],
  ])('sent %s: received %s, ends %s (%s)', (sent, received, ends) => {
    expect(assumedReceiptOn(sent)).toBe(received);
    expect(validationPeriodEndsOn(sent)).toBe(ends);
  });
});
