/**
 * The debtor's time zone, the one the communications use for quiet hours
 * (communications/customer-time-zone.ts's primary zone: the customer's own zone, else their
 * primary ZIP code's, else the organization's), and a time of day as the debtor reads it there: "5:49 AM CST", never UTC.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { readSettings } from '../settings/settings-service';
import { recipientOf } from '../communications/recipients';
import { timeZonesOf } from '../communications/customer-time-zone';

/** The zone of `customerId`, or the organization's when no customer is known (or named). */
export async function debtorZone(db: Knex, tenant: Tenant, customerId?: string | null): Promise<string> {
  const settings = await readSettings(db, tenant);
  const recipient = customerId ? await recipientOf(db, tenant, customerId) : undefined;
  return recipient ? timeZonesOf(recipient, settings.time_zone).primaryZone : settings.time_zone;
}

/** A time of day in `zone`, with the zone's short name: "5:49 AM CST". */
export function clockTime(at: Date, zone: string): string {
  return at.toLocaleTimeString('en-US', { hour: 'numeric', minute: '2-digit', timeZone: zone, timeZoneName: 'short' });
}
