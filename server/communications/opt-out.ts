/**
 * Opting out by the link of an e-mail (12 CFR 1006.6(e); RFC 8058), and back in: the signed
 * link is the credential, so no sign-in. The link names a customer; the change is made for
 * that customer's address (every customer record with it, present and future) and kept in the
 * address's history. Only this way can an opt-out be lifted: the consumer's own act. A link
 * that fails its signature changes nothing.
 */
import type { AppDeps } from '../deps';
import { customerRepo } from '../customer-store/customer-repo';
import { isOptedOut, setAddressPreference } from '../customers/email-opt-outs';
import { nowFor, withClock } from '../kernel/clock';
import { settingsRepo } from '../settings/settings-repo';
import { readOptOutToken } from './opt-out-links';

export type OptOutDeps = Pick<AppDeps, 'db' | 'secrets' | 'clock' | 'events'>;

/** `optedOut`: the address's state after the request; `canOptIn`: the customer still exists to opt back in. */
export type OptOutAnswer = { valid: false } | { valid: true; organizationName: string; optedOut: boolean; canOptIn: boolean };

/** What the link's page shows before the click: whose e-mails, and whether they already stopped. */
export async function readOptOutLink(deps: OptOutDeps, token: string): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  const customer = await customerRepo(deps.db, link.tenant).find(link.customerId);
  const optedOut = !customer || (await isOptedOut(deps.db, link.tenant, customer.email));
  return { valid: true, organizationName: organization_name, optedOut, canOptIn: Boolean(customer) };
}

/** Sets the link's customer's address to `optedOut`; a second click changes nothing more. */
async function setByLink(deps: OptOutDeps, token: string, optedOut: boolean): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const tenant = await withClock(deps.db, link.tenant);
  const exists = await deps.db.transaction(async (trx) => {
    const customer = await customerRepo(trx, tenant).find(link.customerId, { forUpdate: true });
    if (!customer) return false;
    const changed = await setAddressPreference(trx, tenant, { email: customer.email, optedOut, by: 'link', customerId: customer.id, now: nowFor(deps.clock, tenant) });
    if (changed.length > 0) await deps.events.record(trx, tenant, [{ name: 'customer.update', ids: changed }]);
    return true;
  });
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  // A customer deleted since: there is nothing left to e-mail, and nobody to opt back in.
  return { valid: true, organizationName: organization_name, optedOut: optedOut || !exists, canOptIn: exists };
}

/** The click (or a mail client's one-click POST): the customer's address is opted out. */
export const optOutByLink = (deps: OptOutDeps, token: string) => setByLink(deps, token, true);

/** The confirmation page's "Start e-mails again": the customer lifts their own opt-out. */
export const optInByLink = (deps: OptOutDeps, token: string) => setByLink(deps, token, false);
