/**
 * Opting out by the link of an e-mail (12 CFR 1006.6(e); RFC 8058): the signed link is the
 * credential, so no sign-in. A link that fails its signature changes nothing.
 */
import type { AppDeps } from '../deps';
import { customerRepo } from '../customer-store/customer-repo';
import { emailPreferenceChange } from '../customers/email-preference';
import { nowFor, withClock } from '../kernel/clock';
import { settingsRepo } from '../settings/settings-repo';
import { readOptOutToken } from './opt-out-links';

export type OptOutDeps = Pick<AppDeps, 'db' | 'secrets' | 'clock' | 'events'>;

export type OptOutAnswer = { valid: false } | { valid: true; organizationName: string; optedOut: boolean };

/** What the link's page shows before the click: whose e-mails, and whether they already stopped. */
export async function readOptOutLink(deps: OptOutDeps, token: string): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  const customer = await customerRepo(deps.db, link.tenant).find(link.customerId);
  return { valid: true, organizationName: organization_name, optedOut: !customer || customer.email_preference === 'opted_out' };
}

/** The click (or a mail client's one-click POST): the customer is opted out; a second click changes nothing more. */
export async function optOutByLink(deps: OptOutDeps, token: string): Promise<OptOutAnswer> {
  const link = readOptOutToken(deps.secrets, token);
  if (!link) return { valid: false };
  const tenant = await withClock(deps.db, link.tenant);
  await deps.db.transaction(async (trx) => {
    const customers = customerRepo(trx, tenant);
    const customer = await customers.find(link.customerId, { forUpdate: true });
    if (!customer || customer.email_preference === 'opted_out') return;
    await customers.update(customer.id, emailPreferenceChange('opted_out', 'link', nowFor(deps.clock, tenant)));
    await deps.events.record(trx, tenant, [{ name: 'customer.update', ids: [customer.id] }]);
  });
  const { organization_name } = await settingsRepo(deps.db, link.tenant).read();
  return { valid: true, organizationName: organization_name, optedOut: true };
}
