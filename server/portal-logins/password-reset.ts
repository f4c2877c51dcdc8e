/**
 * "Forgot password": a one-use, one-hour link to the account's address. The answer is the same
 * whether the address has an account or not. Choosing the new password through the link also
 * confirms the address (the link proves the mailbox) and lifts the address's sign-in lock.
 */
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { FieldErrors } from '../kernel/errors';
import { hashPassword, passwordProblem } from './passwords';
import { portalAccountRepo } from './portal-account-repo';
import { emailDigest, signInLock } from './sign-in-lock';
import { linkState, sendLink, useLink, type LinkUse } from './account-links';
import { normalEmail } from './registration';

export async function requestReset(deps: AppDeps, tenant: Tenant, email: string, now: Date): Promise<void> {
  const account = await portalAccountRepo(deps.db, tenant).findByEmail(normalEmail(email ?? ''));
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
  const passwordHash = await hashPassword(password);
  return useLink(deps, token, 'reset', async (trx, { tenant, account, now }) => {
    await portalAccountRepo(trx, tenant).update(account.id, { password_hash: passwordHash, confirmed_at: account.confirmed_at ?? now, updated_at: now });
    await signInLock(trx, tenant, emailDigest(deps.secrets, tenant, account.email)).clear();
  });
}
