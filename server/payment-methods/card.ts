/** Card checks that a schema cannot state: Luhn, brand, expiry. */
import type { components } from '../../generated/schema';

export type CardBrand = components['schemas']['CardBrand'];

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

const BRANDS: [CardBrand, RegExp][] = [
  ['amex', /^3[47]/],
  ['diners', /^3(0[0-5]|[689])/],
  ['jcb', /^35(2[89]|[3-8])/],
  ['visa', /^4/],
  ['mastercard', /^(5[1-5]|222[1-9]|22[3-9]|2[3-6]|27[01]|2720)/],
  ['discover', /^(6011|64[4-9]|65|622(12[6-9]|1[3-9]|[2-8]|9[01]|92[0-5]))/],
  ['unionpay', /^62/],
];

export function cardBrand(digits: string): CardBrand {
  return BRANDS.find(([, prefix]) => prefix.test(digits))?.[0] ?? 'unknown';
}

/** A two-digit year means 20YY. A card is valid through the last day of its expiry month (UTC). */
export function expiryYear(twoDigits: number): number {
  return 2000 + twoDigits;
}

export function isExpired(month: number, fullYear: number, now: Date): boolean {
  const year = now.getUTCFullYear();
  return fullYear < year || (fullYear === year && month < now.getUTCMonth() + 1);
}
