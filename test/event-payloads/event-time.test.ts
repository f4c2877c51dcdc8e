import { eventTime, paymentDate } from '../../server/event-payloads/event-time';

/** The formats as they were first written, from toISOString(). */
const iso = (moment: Date) => moment.toISOString().slice(0, 19).replace('T', ' ');
const isoDay = (moment: Date) => {
  const text = moment.toISOString();
  return `${text.slice(5, 7)}/${text.slice(8, 10)}/${text.slice(0, 4)}`;
};

describe('payload times', () => {
  it.each([
    ['2026-03-05T07:08:09.000Z', '2026-03-05 07:08:09', '03/05/2026'],
    ['2026-03-05T07:08:09.999Z', '2026-03-05 07:08:09', '03/05/2026'],
    ['2025-12-31T23:59:59.999Z', '2025-12-31 23:59:59', '12/31/2025'],
    ['2026-01-01T00:00:00.000Z', '2026-01-01 00:00:00', '01/01/2026'],
    ['2024-02-29T12:00:00.001Z', '2024-02-29 12:00:00', '02/29/2024'],
    ['2100-03-01T00:00:00.000Z', '2100-03-01 00:00:00', '03/01/2100'],
    ['2000-02-29T23:59:59.000Z', '2000-02-29 23:59:59', '02/29/2000'],
    ['1970-01-01T00:00:00.000Z', '1970-01-01 00:00:00', '01/01/1970'],
    ['1969-12-31T23:59:59.999Z', '1969-12-31 23:59:59', '12/31/1969'],
    ['1900-02-28T01:02:03.500Z', '1900-02-28 01:02:03', '02/28/1900'],
    ['0001-01-01T00:00:00.000Z', '0001-01-01 00:00:00', '01/01/0001'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31 23:59:59', '12/31/9999'],
  ])('%s is shown as %s and its day as %s', (moment, time, day) => {
    expect(eventTime(new Date(moment))).toBe(time);
    expect(paymentDate(new Date(moment))).toBe(day);
  });

  it('writes the text toISOString() gives, before 1970 and after, to the millisecond and past the four-digit years', () => {
    const moments = [
      -1, -999, -1000, -1001, 0, 1, 999, 1000,
      // 0000-01-01, the last millisecond of 9999, 10000-01-01, a day of the year -1.
      -62167219200000, 253402300799999, 253402300800000, Date.UTC(-1, 5, 15, 12),
      8.64e15,
      -8.64e15,
    ];
    // A spread of times over ±4000 years, each with its milliseconds.
    for (let n = 0; n < 20_000; n += 1) moments.push(Math.round(Math.sin(n * 7919) * 1.3e14) + (n % 1000));
    for (const time of moments) {
      const moment = new Date(time);
      expect([time, eventTime(moment), paymentDate(moment)]).toEqual([time, iso(moment), isoDay(moment)]);
    }
  });

  it('refuses an invalid date as toISOString() does', () => {
    expect(() => eventTime(new Date(Number.NaN))).toThrow(RangeError);
    expect(() => paymentDate(new Date(Number.NaN))).toThrow(RangeError);
  });
});
