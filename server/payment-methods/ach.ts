/** ACH checks that a schema cannot state: the ABA routing checksum and USPS state codes. */

/** 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple of 10, and not all zeros. */
export function isValidRoutingNumber(routing: string): boolean {
  if (!/^\d{9}$/.test(routing) || /^0+$/.test(routing)) return false;
  const d = [...routing].map(Number);
  const sum = 3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!);
  return sum % 10 === 0;
}

/** The 50 states, DC and the inhabited territories. */
export const US_STATES = new Set(
  (
    'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND ' +
    'OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC AS GU MP PR VI'
  ).split(' '),
);

/** One asterisk per hidden digit, the last four shown. */
export function mask(digits: string): string {
  return '*'.repeat(Math.max(0, digits.length - 4)) + digits.slice(-4);
}
