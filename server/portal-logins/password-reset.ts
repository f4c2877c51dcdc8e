/**
 * "Forgot password": a one-use, one-hour link to the account's address. The answer is the same
 * whether the address has an account or not. Choosing the new password through the link also
 * confirms the address (the link proves the mailbox) and lifts the address's sign-in lock.
 * Mails are limited per address typed and per IP address, in PostgreSQL (reset-limits.ts: every
 * process shares the counts); over a limit nothing is sent, and the caller answers the same
 * page as ever.
 */
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { FieldErrors } from '../kernel/errors';
import { hashPassword, passwordProblem } from './passwords';
import { portalAccountRepo } from './portal-account-repo';
import { emailDigest, signInLock } from './sign-in-lock';
import { linkState, sendLink, useLink, type LinkUse } from './account-links';
import { normalEmail } from './registration';
import { resetLimits } from './reset-limits';

/** Reset e-mails per address typed (known or not), in an hour. */
export const RESET_MAILS_PER_ADDRESS = 3;
/** "Forgot password" requests per IP address, in an hour. */
export const RESET_REQUESTS_PER_IP = 20;

/** One request under both limits (reset-limits.ts); false when either is spent (nothing is then sent). */
async function withinLimits(deps: AppDeps, tenant: Tenant, email: string, ip: string, now: Date): Promise<boolean> {
  const limits = resetLimits(deps.db, deps.secrets, tenant);
  await limits.prune(now);
  if ((await limits.count({ kind: 'ip', value: ip }, now)) > RESET_REQUESTS_PER_IP) return false;
  // Counted for any address typed: a count tells nothing about accounts.
  return (await limits.count({ kind: 'address', value: email }, now)) <= RESET_MAILS_PER_ADDRESS;
}

/** Sends the link when the address has an account and no limit is spent; answers nothing either way. */
export async function requestReset(deps: AppDeps, tenant: Tenant, input: { email: string; ip: string }, now: Date): Promise<void> {
  const email = normalEmail(input.email ?? '');
  if (!(await withinLimits(deps, tenant, email, input.ip, now))) return;
  const account = email === '' ? undefined : await portalAccountRepo(deps.db, tenant).findByEmail(email);
  if (!account) return;
  await deps.db.transaction((trx) => sendLink(deps, trx, tenant, account, 'reset', now));
}

export type Reset = LinkUse | { ok: false; reason: 'invalid'; errors: FieldErrors };

export async function resetPassword(deps: AppDeps, token: string, password: string): Promise<Reset> {
  // A spent or expired link is told first: a new password would not help.
  const state = await linkState(deps, token, 'reset');
  if (!state.ok) return state;
  const problem = passwordProblem(password ?? '');
  if (problem) return { ok: false, reason: 'invalid', errors: { password: [problem] } };
  const passwordHash = await hashPassword(password, deps.config.passwordScryptLog2N);
  return useLink(deps, token, 'reset', async (trx, { tenant, account, now }) => {
    await portalAccountRepo(trx, tenant).update(account.id, { password_hash: passwordHash, confirmed_at: account.confirmed_at ?? now, updated_at: now });
    await signInLock(trx, tenant, emailDigest(deps.secrets, tenant, account.email)).clear();
  });
}
