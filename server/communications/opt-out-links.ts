/**
 * The opt-out link of every e-mail to a debtor, signed with a key of its own derived from the
 * data key: `PORTAL_URL/opt-out/v2.<message>.<organization>.<p|s>.<mac>`. It names the message
 * (a row of the communications log, kept at least three years), so the click opts out the
 * address that message went to (12 CFR 1006.6(e): "to that address"), even when the customer
 * has changed their e-mail or been deleted since. Links of e-mails sent before (`v1.<customer>…`)
 * still work: they opt out their customer's current address. Any change to a link (another
 * message's id with this signature) fails the signature.
 */
import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secrets';
import type { Environment, Tenant } from '../kernel/tenant';
import { UUID } from '../db/tenant';

const PURPOSE = 'opt-out-link';

const signed = (id: string, organizationId: string, environment: Environment) => `${id}.${organizationId}.${environment === 'production' ? 'p' : 's'}`;

export function optOutToken(secrets: SecretBox, tenant: Tenant, messageId: string): string {
  const payload = signed(messageId, tenant.organizationId, tenant.environment);
  // The version is signed too: a v1 (customer) link cannot be replayed as a v2 (message) one.
  return `v2.${payload}.${secrets.mac(PURPOSE, `v2.${payload}`)}`;
}

export function optOutUrl(portalUrl: string, secrets: SecretBox, tenant: Tenant, messageId: string): string {
  return `${portalUrl}/opt-out/${optOutToken(secrets, tenant, messageId)}`;
}

export type OptOutLink = { tenant: Tenant } & ({ messageId: string } | { customerId: string });

/** What a genuine link names, and its tenant; undefined for any other text. */
export function readOptOutToken(secrets: SecretBox, token: string): OptOutLink | undefined {
  const [version, id, organizationId, env, mac, ...rest] = token.split('.');
  if ((version !== 'v1' && version !== 'v2') || rest.length > 0 || !id || !organizationId || !mac || (env !== 'p' && env !== 's')) return undefined;
  if (!UUID.test(id) || !UUID.test(organizationId)) return undefined;
  const environment: Environment = env === 'p' ? 'production' : 'sandbox';
  const payload = signed(id, organizationId, environment);
  const expected = Buffer.from(secrets.mac(PURPOSE, version === 'v2' ? `v2.${payload}` : payload));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const tenant: Tenant = { organizationId: organizationId.toLowerCase(), environment, tokenHash: '' };
  return version === 'v2' ? { tenant, messageId: id.toLowerCase() } : { tenant, customerId: id.toLowerCase() };
}
