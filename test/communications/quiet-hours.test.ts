/**
 * Quiet hours at their edges (12 CFR 1006.6(b)(1)(i)): a message may leave from 08:00:00 up to
 * 20:59:59 local time; otherwise it waits for the next 08:00 there, across DST changes too.
 */
import { quietUntil } from '../../server/communications/quiet-hours';
import { timeZoneOf } from '../../server/communications/customer-time-zone';
import { canonicalTimeZone } from '../../server/time-zones';

const at = (iso: string) => new Date(iso);

describe('quietUntil', () => {
  test.each([
    // Chicago in winter is UTC-6.
    ['07:59:59 local: held to 08:00 that day', '2026-12-04T13:59:59Z', 'America/Chicago', '2026-12-04T14:00:00.000Z'],
    ['08:00:00 local: leaves', '2026-12-04T14:00:00Z', 'America/Chicago', undefined],
    ['20:59:59 local: leaves', '2026-12-05T02:59:59Z', 'America/Chicago', undefined],
    ['21:00:00 local: held to 08:00 the next day', '2026-12-05T03:00:00Z', 'America/Chicago', '2026-12-05T14:00:00.000Z'],
    ['23:30 local on the last day of a month: held to the 1st', '2026-12-01T05:30:00Z', 'America/Chicago', '2026-12-01T14:00:00.000Z'],
    ['00:10 local in Honolulu (UTC-10)', '2026-12-04T10:10:00Z', 'Pacific/Honolulu', '2026-12-04T18:00:00.000Z'],
    ['Phoenix keeps UTC-7 in summer', '2026-07-01T14:00:00Z', 'America/Phoenix', '2026-07-01T15:00:00.000Z'],
    // The night DST starts in New York (Mar 8, 2026, 02:00 EST becomes 03:00 EDT): 08:00 EDT is 12:00 UTC.
    ['the night DST starts', '2026-03-08T06:30:00Z', 'America/New_York', '2026-03-08T12:00:00.000Z'],
    // The night DST ends (Nov 1, 2026): 08:00 EST is 13:00 UTC.
    ['the night DST ends', '2026-11-01T05:30:00Z', 'America/New_York', '2026-11-01T13:00:00.000Z'],
  ])('%s', (_, now, zone, expected) => {
    expect(quietUntil(at(now), zone)?.toISOString()).toBe(expected);
  });
});

describe('the time zone of a customer', () => {
  test('their own, else their ZIP code\'s, else the organization\'s', () => {
    expect(timeZoneOf({ time_zone: 'America/Denver', postal_code: '10001' }, 'America/New_York')).toBe('America/Denver');
    expect(timeZoneOf({ time_zone: null, postal_code: '85004' }, 'America/New_York')).toBe('America/Phoenix');
    expect(timeZoneOf({ time_zone: null, postal_code: '96815' }, 'America/New_York')).toBe('Pacific/Honolulu');
    expect(timeZoneOf({ time_zone: null, postal_code: '00000' }, 'America/Boise')).toBe('America/Boise');
    expect(timeZoneOf({ time_zone: null, postal_code: null }, 'America/Boise')).toBe('America/Boise');
  });

  test('names are checked against the tz database and answered in its spelling', () => {
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeUndefined();
  });
});
