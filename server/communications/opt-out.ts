/**
 * Opting out by the link of an e-mail (12 CFR 1006.6(e); RFC 8058), and back in: the signed
 * link is the credential, so no sign-in. The link names its message, whose address is opted
 * out (every customer record with it, present and future), the change kept in the address's
 * history; an older link names a customer, whose current address is meant. Only this way can
 * an opt-out be lifted: the consumer's own act. A link that fails its signature changes
 * nothing.
 */
import type { AppDeps } from '../deps';
import { customerRepo } from '../customer-store/customer-repo';
import { isOptedOut, setAddressPreference } from '../customers/email-opt-outs';
import { nowFor, withClock } from '../kernel/clock';
import { settingsRepo } from '../settings/settings-repo';
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { COMMUNICATIONS } from './communication-repo';
import { readOptOutToken, type OptOutLink } from './opt-out-links';

export type OptOutDeps = Pick<AppDeps, 'db' | 'secrets' | 'clock' | 'events'>;

/** `optedOut`: the address's state after the request; `canOptIn`: the address is known, to opt back in. */
export type OptOutAnswer = { valid: false } | { valid: true; organizationName: string; optedOut: boolean; canOptIn: boolean };

/** The address a link stands for, and the customer record it came through; undefined when neither is known any more. */
async function addressOf(db: Knex, tenant: Tenant, link: OptOutLink): Promise<{ email: string; customerId: string } | undefined> {
  if ('messageId' in link) {
    const row = (await db(COMMUNICATIONS).where({ id: link.messageId, organization_id: tenant.organizationId, environment: tenant.environment }).first('to', 'customer_id')) as
      | { to: string; customer_id: string }
      | undefined;
    return row && { email: row.to, customerId: row.customer_id };
  }
  const customer = await customerRepo(db, tenant).find(link.customerId);
  return customer && { email: customer.email, customerId: customer.id };
}

/** What the link's page shows before the click: whose e-mails, and whether they already stopped. */
export async function readOptOutLink(deps: OptOutDeps, token: string): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  const target = await addressOf(deps.db, link.tenant, link);
  const optedOut = !target || (await isOptedOut(deps.db, link.tenant, target.email));
  return { valid: true, organizationName: organization_name, optedOut, canOptIn: Boolean(target) };
}

/** Sets the link's address to `optedOut`; a second click changes nothing more. */
async function setByLink(deps: OptOutDeps, token: string, optedOut: boolean): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const tenant = await withClock(deps.db, link.tenant);
  const known = await deps.db.transaction(async (trx) => {
    const target = await addressOf(trx, tenant, link);
    if (!target) return false;
    const changed = await setAddressPreference(trx, tenant, { ...target, optedOut, by: 'link', now: nowFor(deps.clock, tenant) });
    if (changed.length > 0) await deps.events.record(trx, tenant, [{ name: 'customer.update', ids: changed }]);
    return true;
  });
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  // An old link whose customer was deleted since: there is nothing left to e-mail, and nobody to opt back in.
  return { valid: true, organizationName: organization_name, optedOut: optedOut || !known, canOptIn: known };
}

/** The click (or a mail client's one-click POST): the customer's address is opted out. */
export const optOutByLink = (deps: OptOutDeps, token: string) => setByLink(deps, token, true);

/** The confirmation page's "Start e-mails again": the customer lifts their own opt-out. */
export const optInByLink = (deps: OptOutDeps, token: string) => setByLink(deps, token, false);
