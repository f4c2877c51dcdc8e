/**
 * Every time zone a customer is known to be in, for quiet hours: their own `time_zone`; the
 * zone of the ZIP code of each of their addresses (zipcode-to-timezone: a table of about 42,000
 * US ZIP codes, no dependencies, IANA names); the zones of their phone's area code (our table,
 * area-code-time-zones.json, its source stated in it; an area code that spans zones gives all
 * of them). None known: the organization's `time_zone`. The primary zone (for the hour of
 * zones that share none) is their own, else their primary address's, else the organization's.
 */
import { lookup } from 'zipcode-to-timezone';
import table from './area-code-time-zones.json';

export interface Whereabouts {
  time_zone: string | null;
  /** The primary address's first. */
  postal_codes: string[];
  phone: string | null;
}

const AREA_CODES = table.area_codes as Record<string, string[]>;

/** The area code of a US phone number as the API accepts it (10 digits, maybe after +1 or 1). */
export function areaCodeOf(phone: string): string | undefined {
  const digits = phone.replace(/\D/g, '');
  const national = digits.length === 11 && digits.startsWith('1') ? digits.slice(1) : digits;
  return national.length === 10 ? national.slice(0, 3) : undefined;
}

export const zonesOfAreaCode = (areaCode: string): string[] => AREA_CODES[areaCode] ?? [];

const zoneOfZip = (postalCode: string): string | undefined => lookup(postalCode.slice(0, 5)) ?? undefined;

export function timeZonesOf(customer: Whereabouts, organizationTimeZone: string): { zones: string[]; primaryZone: string } {
  const zones = new Set<string>();
  if (customer.time_zone) zones.add(customer.time_zone);
  for (const zip of customer.postal_codes) {
    const zone = zoneOfZip(zip);
    if (zone) zones.add(zone);
  }
  const areaCode = customer.phone ? areaCodeOf(customer.phone) : undefined;
  for (const zone of areaCode ? zonesOfAreaCode(areaCode) : []) zones.add(zone);
  const primaryZip = customer.postal_codes[0];
  const primaryZone = customer.time_zone ?? (primaryZip && zoneOfZip(primaryZip)) ?? organizationTimeZone;
  return { zones: zones.size > 0 ? [...zones] : [organizationTimeZone], primaryZone };
}
