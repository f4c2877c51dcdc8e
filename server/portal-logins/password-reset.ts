/**
 * "Forgot password": a one-use, one-hour link to the account's address. The answer is the same
 * whether the address has an account or not. Choosing the new password through the link also
 * confirms the address (the link proves the mailbox) and lifts the address's sign-in lock.
 * Mails are limited per address typed and per IP address, in PostgreSQL (every process shares
 * the counts); over a limit nothing is sent, and the caller answers the same page as ever.
 */
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import { createLimiter } from '../http/rate-limit';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { FieldErrors } from '../kernel/errors';
import { hashPassword, passwordProblem } from './passwords';
import { portalAccountRepo } from './portal-account-repo';
import { emailDigest, signInLock } from './sign-in-lock';
import { linkState, sendLink, useLink, type LinkUse } from './account-links';
import { normalEmail } from './registration';

/** Reset e-mails per address typed (known or not), in an hour. */
export const RESET_MAILS_PER_ADDRESS = 3;
/** "Forgot password" requests per IP address, in an hour. */
export const RESET_REQUESTS_PER_IP = 20;
const HOUR_SECONDS = 3600;

/** "Forgot password" under its limits: made once per router, as the guest lookup's limits are. */
export function resetRequests(deps: AppDeps) {
  const perIp: RateLimiterPostgres = createLimiter(deps.db, { points: RESET_REQUESTS_PER_IP, durationSeconds: HOUR_SECONDS, keyPrefix: 'portal-reset-ip' });
  const perAddress: RateLimiterPostgres = createLimiter(deps.db, { points: RESET_MAILS_PER_ADDRESS, durationSeconds: HOUR_SECONDS, keyPrefix: 'portal-reset-address' });

  /** One request under both limits; false when either is spent (nothing is then sent). */
  async function withinLimits(tenant: Tenant, email: string, ip: string): Promise<boolean> {
    try {
      await perIp.consume(ip);
      // Counted for any address typed, under a keyed digest: a count tells nothing about accounts.
      await perAddress.consume(deps.secrets.mac('portal-reset-address', `${tenant.organizationId}:${tenant.environment}:${email}`));
      return true;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return false;
      throw rejection;
    }
  }

  return {
    /** Sends the link when the address has an account and no limit is spent; answers nothing either way. */
    async request(tenant: Tenant, input: { email: string; ip: string }, now: Date): Promise<void> {
      const email = normalEmail(input.email ?? '');
      if (!(await withinLimits(tenant, email, input.ip))) return;
      const account = email === '' ? undefined : await portalAccountRepo(deps.db, tenant).findByEmail(email);
      if (!account) return;
      await deps.db.transaction((trx) => sendLink(deps, trx, tenant, account, 'reset', now));
    },
  };
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
