/**
 * The opt-out link of every e-mail to a debtor: `PORTAL_URL/opt-out/v1.<customer>.<organization>.<p|s>.<mac>`,
 * signed with a key of its own derived from the data key. The link names its customer and
 * tenant, so it works without signing in and still tells after the customer is deleted; any
 * change to it (another customer's id with this signature) fails the signature.
 */
import { timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../crypto/secrets';
import type { Environment, Tenant } from '../kernel/tenant';
import { UUID } from '../db/tenant';

const PURPOSE = 'opt-out-link';

const signed = (customerId: string, organizationId: string, environment: Environment) => `${customerId}.${organizationId}.${environment === 'production' ? 'p' : 's'}`;

export function optOutToken(secrets: SecretBox, tenant: Tenant, customerId: string): string {
  const payload = signed(customerId, tenant.organizationId, tenant.environment);
  return `v1.${payload}.${secrets.mac(PURPOSE, payload)}`;
}

export function optOutUrl(portalUrl: string, secrets: SecretBox, tenant: Tenant, customerId: string): string {
  return `${portalUrl}/opt-out/${optOutToken(secrets, tenant, customerId)}`;
}

/** The customer and tenant of a genuine link; undefined for any other text. */
export function readOptOutToken(secrets: SecretBox, token: string): { customerId: string; tenant: Tenant } | undefined {
  const [version, customerId, organizationId, env, mac, ...rest] = token.split('.');
  if (version !== 'v1' || rest.length > 0 || !customerId || !organizationId || !mac || (env !== 'p' && env !== 's')) return undefined;
  if (!UUID.test(customerId) || !UUID.test(organizationId)) return undefined;
  const environment: Environment = env === 'p' ? 'production' : 'sandbox';
  const expected = Buffer.from(secrets.mac(PURPOSE, signed(customerId, organizationId, environment)));
  const given = Buffer.from(mac);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return { customerId: customerId.toLowerCase(), tenant: { organizationId: organizationId.toLowerCase(), environment, tokenHash: '' } };
}
