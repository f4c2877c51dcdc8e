/**
 * The organization settings: each key once, with its default and the rule a schema cannot
 * check. A new setting is one entry here and one property in the document's `Settings` and
 * `SettingsUpdate`; storage (one JSON object per tenant) and the routes need nothing more.
 */
import type { components } from '../../generated/schema';
import { canonicalTimeZone } from '../kernel/time-zones';

export type Settings = components['schemas']['Settings'];
export type SettingsUpdate = components['schemas']['SettingsUpdate'];

export const DEFAULT_DISCLOSURE =
  'This communication is from a debt collector. This is an attempt to collect a debt, and any information obtained will be used for that purpose.';

/**
 * FDCPA §807(11): the initial communication says the collector "is attempting to collect a
 * debt and that any information obtained will be used for that purpose"; later ones that they
 * are from a debt collector (the document's pattern). One text serves every e-mail, the first
 * included, so it must carry both halves; matched without regard to case or line breaks.
 */
const INITIAL_DISCLOSURE_HALVES: [RegExp, string][] = [
  [/attempt(ing)? to collect a debt/, 'must say that it is an "attempt to collect a debt" (FDCPA §807(11))'],
  [/information obtained will be used for (that|this) purpose/, 'must say that "any information obtained will be used for that purpose" (FDCPA §807(11))'],
];

/** A From that shows debt collection in an inbox list tells whoever glances at the screen (FDCPA §808(8), 12 CFR 1006.6(d)). */
const DEBT_COLLECTION_PHRASE = /debt\s*collect/i;

interface Key<K extends keyof Settings> {
  /** The value of a key never set; `organization` is the organization's own record. */
  default: (organization: { notification_email: string | null; organization_name: string }) => Settings[K];
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
  debt_collector_disclosure: {
    default: () => DEFAULT_DISCLOSURE,
    check: (value) => {
      const text = value.toLowerCase().replace(/\s+/g, ' ');
      const missing = INITIAL_DISCLOSURE_HALVES.find(([pattern]) => !pattern.test(text));
      return missing ? { error: missing[1] } : { value };
    },
  },
  settlement_max_discount_percentage: { default: () => 80, check: (value) => (Math.round(value * 100) === value * 100 ? { value } : { error: 'must have at most two decimals' }) },
  settlement_max_months: { default: () => 24 },
  dispute_hold: { default: () => 'all' },
  // FDCPA §807(14): the agency's true name; never the deployment's (a "Debt Collection Service").
  sender_name: {
    default: (organization) => organization.organization_name,
    check: (value) => (DEBT_COLLECTION_PHRASE.test(value) ? { error: 'must not say "debt collection": the From shows in an inbox list (FDCPA §808(8), 12 CFR 1006.6(d))' } : { value: value.trim() }),
  },
  sender_email: { default: () => null },
  reply_to_email: { default: () => null },
  quiet_hours_no_overlap_hour: { default: () => 8 },
};
