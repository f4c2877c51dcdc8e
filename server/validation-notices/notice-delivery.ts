/**
 * How a validation notice may go (12 CFR 1006.42): by e-mail only with the consumer's E-SIGN
 * consent to electronic notices (§1006.42(b), 15 U.S.C. §7001(c)) or under the §1006.42(c)
 * procedure the agency asserts, to an address that has not been opted out of (§1006.6(e));
 * otherwise by mail, to the customer's primary postal address.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { NOTICE_CONSENT_VERSIONS } from '../documents/esign-consent';
import { barredAddress, type Recipient } from '../communications/recipients';

type Schemas = components['schemas'];
export type Delivery = Schemas['ValidationNotice']['delivery'];

export interface PostalAddress {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postal_code: string;
}

export interface DeliveryChoice {
  delivery: Delivery;
  /** The e-mail address, or the postal address on one line. */
  to: string;
  consent: Schemas['ElectronicConsent'] | null;
  procedure: boolean;
}

/** The address's lines as a letter prints them. */
export function addressLines(address: PostalAddress | undefined): string[] {
  if (!address) return [];
  const last = [[address.city, address.state].filter(Boolean).join(', '), address.postal_code].filter(Boolean).join(' ');
  return [address.line1, address.line2, last].filter((line): line is string => !!line);
}

/** The latest signature in the Portal under a consent wording that covers notices, as a consent record. */
async function portalConsent(db: Knex, tenant: Tenant, customerId: string): Promise<Schemas['ElectronicConsent'] | null> {
  if (NOTICE_CONSENT_VERSIONS.length === 0) return null;
  const row = (await db('document_signatures')
    .where({ organization_id: tenant.organizationId, environment: tenant.environment, customer_id: customerId })
    .whereIn('consent_version', NOTICE_CONSENT_VERSIONS)
    .orderBy('signed_at', 'desc')
    .first('signed_at', 'consent_version')) as { signed_at: Date; consent_version: string } | undefined;
  return row ? { given_at: row.signed_at.toISOString(), method: 'portal', consent_version: row.consent_version, source: 'portal_signature' } : null;
}

export async function chooseDelivery(
  db: Knex,
  tenant: Tenant,
  request: Schemas['ValidationNoticeCreate'],
  recipient: Recipient,
  address: PostalAddress | undefined,
  now: Date,
): Promise<DeliveryChoice> {
  const errors: FieldErrors = {};
  const given = request.esign_consent;
  if (given && new Date(given.given_at).getTime() > now.getTime()) errors['esign_consent.given_at'] = ['must not be in the future'];
  const consent = given ? { ...given, source: 'request' as const } : await portalConsent(db, tenant, recipient.id);
  const procedure = request.procedure_1006_42c ?? false;

  const barred = recipient.email ? await barredAddress(db, tenant, recipient, recipient.email) : undefined;
  const noEmail = !recipient.email
    ? 'the customer has no e-mail address'
    : barred === 'opted_out'
      ? 'the customer opted out of e-mail (12 CFR 1006.6(e))'
      : barred === 'work_address'
        ? 'the address is a known work address (12 CFR 1006.22(f)(3))'
      : !consent && !procedure
        ? 'needs the customer\'s E-SIGN consent to electronic notices (esign_consent, or given in the Portal) or procedure_1006_42c (12 CFR 1006.42)'
        : undefined;
  const delivery: Delivery = request.delivery ?? (noEmail ? 'mail' : 'email');
  if (delivery === 'email' && noEmail) errors.delivery = [`email ${noEmail}`];
  const lines = addressLines(address);
  if (delivery === 'mail' && !address?.line1) errors.delivery = [`mail needs the customer's primary postal address with a street line${request.delivery ? '' : ` (e-mail is not possible: ${noEmail})`}`];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);

  return delivery === 'email'
    ? { delivery, to: recipient.email, consent, procedure }
    : { delivery, to: lines.join(', '), consent: null, procedure: false };
}
