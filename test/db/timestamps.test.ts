import pg from 'pg';
import { parseTimestamptz } from '../../server/db/timestamps';

/** The driver's own parser (postgres-date): this file does not load database.ts, which replaces it. */
const driverParse = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => unknown;

/** A time as PostgreSQL writes a timestamptz in a UTC session: trailing zeros of the fraction dropped. */
function written(ms: number, micros: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = String(micros).padStart(6, '0').replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

const same = (text: string) => {
  const ours = parseTimestamptz(text);
  const theirs = driverParse(text);
  return theirs instanceof Date ? ours instanceof Date && Object.is(ours.getTime(), theirs.getTime()) : Object.is(ours, theirs);
};

describe('timestamptz values', () => {
  it('are the Dates the driver reads, for every time PostgreSQL writes in a UTC session', () => {
    expect(driverParse).not.toBe(parseTimestamptz);
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const first = Date.UTC(100, 0, 1);
    const last = Date.UTC(9999, 11, 31, 23, 59, 59);
    const texts: string[] = [];
    for (let n = 0; n < 20_000; n += 1) {
      const ms = Math.floor((first + random() * (last - first)) / 1000) * 1000;
      const micros = n % 4 === 0 ? 0 : n % 4 === 1 ? Math.floor(random() * 1_000_000) : Math.floor(random() * 1000) * 1000;
      texts.push(written(ms, micros));
    }
    texts.push('2026-11-28 12:55:17.999999+00', '2026-11-28 12:55:17.000001+00', '2026-11-28 12:55:17.1+00', '0100-01-01 00:00:00+00', '9999-12-31 23:59:59.999999+00');
    expect(texts.filter((text) => !same(text))).toEqual([]);
  });

  it('are the Dates (or values) the driver reads for any other text', () => {
    const others = [
      '2026-11-28 12:55:17+05:30',
      '2026-11-28 12:55:17.25-08',
      '2026-11-28 12:55:17-03:30:15',
      '0044-03-15 12:00:00+00 BC',
      '0099-06-01 00:00:00+00',
      '0001-01-01 00:00:00+00',
      '12345-01-01 00:00:00+00',
      '2026-11-28 12:55:17.1234567+00',
      '2026-11-28 12:55:17.+00',
      '2026-11-28T12:55:17+00',
      '2026-1a-28 12:55:17+00',
      '2026-11-28 12:55:1x+00',
      '2026-11-28 12:55:17.12a4+00',
      'infinity',
      '-infinity',
      '2026-11-28',
    ];
    expect(others.filter((text) => !same(text))).toEqual([]);
  });
});
