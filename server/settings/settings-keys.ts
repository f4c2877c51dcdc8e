/**
 * The organization settings: each key once, with its default and the rule a schema cannot
 * check. A new setting is one entry here and one property in the document's `Settings` and
 * `SettingsUpdate`; storage (one JSON object per tenant) and the routes need nothing more.
 */
import type { components } from '../../generated/schema';
import { canonicalTimeZone } from '../time-zones';

export type Settings = components['schemas']['Settings'];
export type SettingsUpdate = components['schemas']['SettingsUpdate'];

export const DEFAULT_DISCLOSURE =
  'This communication is from a debt collector. This is an attempt to collect a debt, and any information obtained will be used for that purpose.';

interface Key<K extends keyof Settings> {
  /** The value of a key never set; `organization` is the organization's own record. */
  default: (organization: { notification_email: string | null }) => Settings[K];
  /** The stored value of a valid input, or a message for the 422 on this key. */
  check?: (value: NonNullable<SettingsUpdate[K]>) => { value: Settings[K] } | { error: string };
}

export const SETTING_KEYS: { [K in keyof Settings]-?: Key<K> } = {
  time_zone: {
    default: () => 'America/New_York',
    check: (value) => {
      const canonical = canonicalTimeZone(value);
      return canonical ? { value: canonical } : { error: 'is not a known IANA time zone' };
    },
  },
  reminder_days_before: { default: () => 3 },
  contact_email: { default: (organization) => organization.notification_email },
  contact_phone: { default: () => null },
  mailing_address: {
    default: () => null,
    check: (value) => {
      const lines = value.split(/\r?\n/).map((line) => line.trim()).filter(Boolean);
      return lines.length === 0 ? { error: 'must not be blank' } : lines.length > 5 ? { error: 'must have at most 5 lines' } : { value: lines.join('\n') };
    },
  },
  debt_collector_disclosure: { default: () => DEFAULT_DISCLOSURE },
  settlement_max_discount_percentage: { default: () => 80, check: (value) => (Math.round(value * 100) === value * 100 ? { value } : { error: 'must have at most two decimals' }) },
  settlement_max_months: { default: () => 24 },
  dispute_hold: { default: () => 'all' },
};
