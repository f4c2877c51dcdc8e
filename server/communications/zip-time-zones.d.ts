/** zipcode-to-timezone ships no types: a 5-digit US ZIP code to its IANA zone, or null. */
declare module 'zipcode-to-timezone' {
  export function lookup(zipcode: string): string | null;
}
