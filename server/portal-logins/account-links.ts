/**
 * The one-use links of a Portal account: "confirm your e-mail" and "reset your password". A
 * link carries 32 random bytes; only their SHA-256 is stored (like API tokens: a random token
 * of that entropy needs no salt or key to be safe from guessing). A link works once, for one
 * hour. A newer reset link retires the older ones (only the latest may set a password); a newer
 * confirmation link leaves the older ones working, since both confirm the same address: the
 * first one opened confirms it and retires the rest, which then say the address is confirmed. The e-mail goes through the
 * communications log as `account_security` (sent at once: the person asked for it), and says
 * nothing a person typed: only our words and the link.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { hashToken } from '../crypto/secrets';
import { nowFor, withClock } from '../kernel/clock';
import { sendToDebtor } from '../communications/outgoing';
import { accountTokenRepo, portalAccountRepo, type PortalAccountRow, type TokenPurpose } from './portal-account-repo';

export const LINK_MINUTES = 60;

/** Where each link leads, under the Portal's address. */
export const LINK_PAGES: Record<TokenPurpose, string> = { confirm: '/confirm-email', reset: '/reset-password' };

const MAILS: Record<TokenPurpose, { subject: string; body: (url: string) => string }> = {
  confirm: {
    subject: 'Confirm your e-mail for the Payment Portal',
    body: (url) =>
      `Someone, we hope you, created a Payment Portal account with this e-mail address.\n\nTo confirm it, open this link within one hour:\n${url}\n\nIf it was not you, ignore this e-mail: without the link, the account cannot be used.`,
  },
  reset: {
    subject: 'Reset your Payment Portal password',
    body: (url) =>
      `We were asked to reset the password of the Payment Portal account with this e-mail address.\n\nTo choose a new password, open this link within one hour (it works once):\n${url}\n\nIf you did not ask for it, ignore this e-mail: your password stays as it is.`,
  },
};

export type LinkDeps = Pick<AppDeps, 'boss' | 'config' | 'secrets'>;

/** Makes a link of `purpose` for `account` and writes its e-mail, on `trx`. */
export async function sendLink(deps: LinkDeps, trx: Knex.Transaction, tenant: Tenant, account: PortalAccountRow, purpose: TokenPurpose, now: Date): Promise<void> {
  const tokens = accountTokenRepo(trx);
  if (purpose === 'reset') await tokens.retire(account.id, purpose, now);
  const token = randomBytes(32).toString('base64url');
  await tokens.insert({ portal_account_id: account.id, purpose, token_hash: hashToken(token), expires_at: new Date(now.getTime() + LINK_MINUTES * 60_000), created_at: now });
  const url = `${deps.config.portalUrl}${LINK_PAGES[purpose]}?token=${token}`;
  const mail = MAILS[purpose];
  await sendToDebtor(deps, trx, tenant, { customerId: account.customer_id, kind: 'account_security', to: account.email, subject: mail.subject, body: mail.body(url), now });
}

export type LinkUse =
  | { ok: true; tenant: Tenant; account: PortalAccountRow; now: Date }
  /** `confirmed`: a confirmation link whose address is confirmed already (by this link or another). */
  | { ok: false; reason: 'unknown' | 'used' | 'expired' | 'confirmed'; tenant?: Tenant };

/** What a link is now, without using it (the page that shows its form). */
export async function linkState(deps: Pick<AppDeps, 'db' | 'clock'>, token: string, purpose: TokenPurpose): Promise<LinkUse> {
  const tokenHash = hashToken(token);
  const found = await accountTokenRepo(deps.db).tenantOf(tokenHash);
  if (!found) return { ok: false, reason: 'unknown' };
  const tenant = await withClock(deps.db, found);
  const now = nowFor(deps.clock, tenant);
  const row = await accountTokenRepo(deps.db).find(tokenHash);
  const account = row ? await portalAccountRepo(deps.db, tenant).find(row.portal_account_id) : undefined;
  if (!row || row.purpose !== purpose || !account) return { ok: false, reason: 'unknown', tenant };
  if (row.used_at) return { ok: false, reason: 'used', tenant };
  if (row.expires_at.getTime() <= now.getTime()) return { ok: false, reason: 'expired', tenant };
  return { ok: true, tenant, account, now };
}

/**
 * Uses a link inside `work`'s transaction: the row is locked, so two clicks at once use it once;
 * `work` runs only for a link that is known, unused and not expired, and the link is spent with it.
 */
export async function useLink(deps: Pick<AppDeps, 'db' | 'clock'>, token: string, purpose: TokenPurpose, work: (trx: Knex.Transaction, use: Extract<LinkUse, { ok: true }>) => Promise<void>): Promise<LinkUse> {
  const tokenHash = hashToken(token);
  const found = await accountTokenRepo(deps.db).tenantOf(tokenHash);
  if (!found) return { ok: false, reason: 'unknown' };
  const tenant = await withClock(deps.db, found);
  return deps.db.transaction(async (trx): Promise<LinkUse> => {
    const now = nowFor(deps.clock, tenant);
    const row = await accountTokenRepo(trx).findForUpdate(tokenHash);
    if (!row || row.purpose !== purpose) return { ok: false, reason: 'unknown', tenant };
    const account = await portalAccountRepo(trx, tenant).find(row.portal_account_id);
    if (row.used_at) return { ok: false, reason: purpose === 'confirm' && account?.confirmed_at ? 'confirmed' : 'used', tenant };
    if (row.expires_at.getTime() <= now.getTime()) return { ok: false, reason: 'expired', tenant };
    if (!account) return { ok: false, reason: 'unknown', tenant };
    await accountTokenRepo(trx).use(row.id, now);
    // The account's other links of this kind are spent with this one (a confirmed address needs no other).
    await accountTokenRepo(trx).retire(account.id, purpose, now);
    const use = { ok: true as const, tenant, account, now };
    await work(trx, use);
    return use;
  });
}
