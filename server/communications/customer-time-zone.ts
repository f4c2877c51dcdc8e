/**
 * The time zone of a customer for quiet hours: their own `time_zone`; else the zone of the ZIP
 * code of their primary address (zipcode-to-timezone: a table of about 42,000 US ZIP codes, no
 * dependencies, IANA names); else the organization's `time_zone`.
 */
import { lookup } from 'zipcode-to-timezone';

export interface Whereabouts {
  time_zone: string | null;
  postal_code: string | null;
}

export function timeZoneOf(customer: Whereabouts, organizationTimeZone: string): string {
  if (customer.time_zone) return customer.time_zone;
  const zip = customer.postal_code?.slice(0, 5);
  return (zip && lookup(zip)) || organizationTimeZone;
}
