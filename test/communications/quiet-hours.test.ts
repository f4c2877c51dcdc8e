/**
 * Quiet hours at their edges (12 CFR 1006.6(b)(1)(i)): a message may leave from 08:00:00 up to
 * 20:59:59 local time; otherwise it waits for the next 08:00 there, across DST changes too.
 */
import { quietUntil } from '../../server/communications/quiet-hours';
import { areaCodeOf, timeZonesOf } from '../../server/communications/customer-time-zone';
import { canonicalTimeZone } from '../../server/kernel/time-zones';

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
    expect(quietUntil(at(now), { zones: [zone], primaryZone: zone, noOverlapHour: 8 })?.toISOString()).toBe(expected);
  });
});

describe('quiet hours in every zone a customer is known to be in', () => {
  // A New York ZIP code and a Honolulu phone, in December: New York UTC-5, Honolulu UTC-10.
  const newYorkAndHonolulu = { zones: ['America/New_York', 'Pacific/Honolulu'], primaryZone: 'America/New_York', noOverlapHour: 8 };

  test('04:00 in Honolulu (09:00 in New York): held until 08:00 in Honolulu', () => {
    expect(quietUntil(at('2026-12-04T14:00:00Z'), newYorkAndHonolulu)?.toISOString()).toBe('2026-12-04T18:00:00.000Z');
  });

  test('from 08:00 in Honolulu up to 21:00 in New York both allow it; 21:00 in New York holds it to Honolulu\'s next 08:00', () => {
    expect(quietUntil(at('2026-12-04T18:00:00Z'), newYorkAndHonolulu)).toBeUndefined();
    expect(quietUntil(at('2026-12-05T01:59:59Z'), newYorkAndHonolulu)).toBeUndefined();
    expect(quietUntil(at('2026-12-05T02:00:00Z'), newYorkAndHonolulu)?.toISOString()).toBe('2026-12-05T18:00:00.000Z');
  });

  test('zones that share no allowed hour: the agency\'s hour in the primary zone', () => {
    // London (UTC+0), Singapore (UTC+8), Los Angeles (UTC-8): every hour is night somewhere.
    const apart = { zones: ['Europe/London', 'Asia/Singapore', 'America/Los_Angeles'], primaryZone: 'America/Los_Angeles', noOverlapHour: 10 };
    expect(quietUntil(at('2026-12-04T12:00:00Z'), apart)?.toISOString()).toBe('2026-12-04T18:00:00.000Z');
    expect(quietUntil(at('2026-12-04T18:30:00Z'), apart)).toBeUndefined();
    expect(quietUntil(at('2026-12-04T19:00:00Z'), apart)?.toISOString()).toBe('2026-12-05T18:00:00.000Z');
  });
});

describe('the time zones of a customer', () => {
  test('their own, every address\'s ZIP code\'s, their phone\'s area code\'s; none known: the organization\'s', () => {
    expect(timeZonesOf({ time_zone: 'America/Denver', postal_codes: ['10001'], phone: null }, 'America/New_York')).toEqual({ zones: ['America/Denver', 'America/New_York'], primaryZone: 'America/Denver' });
    expect(timeZonesOf({ time_zone: null, postal_codes: ['85004', '96815'], phone: null }, 'America/New_York')).toEqual({ zones: ['America/Phoenix', 'Pacific/Honolulu'], primaryZone: 'America/Phoenix' });
    expect(timeZonesOf({ time_zone: null, postal_codes: ['10001'], phone: '(808) 555-0147' }, 'America/Chicago')).toEqual({ zones: ['America/New_York', 'Pacific/Honolulu'], primaryZone: 'America/New_York' });
    // An area code that spans two zones gives both (850: the Florida panhandle).
    expect(timeZonesOf({ time_zone: null, postal_codes: [], phone: '+1 850-555-0100' }, 'America/Boise').zones).toEqual(['America/New_York', 'America/Chicago']);
    expect(timeZonesOf({ time_zone: null, postal_codes: ['00000'], phone: '800 555 0100' }, 'America/Boise')).toEqual({ zones: ['America/Boise'], primaryZone: 'America/Boise' });
    expect(timeZonesOf({ time_zone: null, postal_codes: [], phone: null }, 'America/Boise')).toEqual({ zones: ['America/Boise'], primaryZone: 'America/Boise' });
  });

  test('the area code of a US number as the API accepts it', () => {
    expect(['(512) 555-0147', '512.555.0147', '+1 512-555-0147', '15125550147'].map(areaCodeOf)).toEqual(['512', '512', '512', '512']);
    expect(areaCodeOf('555-0147')).toBeUndefined();
  });

  test('names are checked against the tz database and answered in its spelling', () => {
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeUndefined();
  });
});
