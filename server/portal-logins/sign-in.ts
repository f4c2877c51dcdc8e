/**
 * Signing in with e-mail and password. A wrong password and an unknown e-mail answer the same,
 * in the same time: an unknown address is checked against a hash of no one's password, and
 * both count towards the address's lock (sign-in-lock.ts). While locked, no password is
 * checked at all. A right password of an address not yet confirmed signs nobody in: a new
 * confirmation link is sent instead.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { passwordMatches, passwordMatchesNobody } from './passwords';
import { portalAccountRepo, type PortalAccountRow } from './portal-account-repo';
import { emailDigest, signInLock } from './sign-in-lock';
import { sendLink } from './account-links';
import { normalEmail, type Recorder } from './registration';

export type SignIn =
  | { kind: 'signed_in'; account: PortalAccountRow }
  | { kind: 'unconfirmed'; account: PortalAccountRow }
  /** Wrong password or unknown e-mail (the account, when known, is for the tracking event only). */
  | { kind: 'refused'; account?: PortalAccountRow }
  | { kind: 'locked'; until: Date; account?: PortalAccountRow };

/** `signedIn` runs in the transaction that records the sign-in (the browser session, the event). */
export async function signIn(deps: AppDeps, tenant: Tenant, input: { email: string; password: string }, now: Date, signedIn: Recorder): Promise<SignIn> {
  const email = normalEmail(input.email ?? '');
  const lock = signInLock(deps.db, tenant, emailDigest(deps.secrets, tenant, email));
  const account = email === '' ? undefined : await portalAccountRepo(deps.db, tenant).findByEmail(email);
  const locked = await lock.lockedUntil(now);
  if (locked) return { kind: 'locked', until: locked, account };
  const password = String(input.password ?? '');
  const right = account ? await passwordMatches(password, account.password_hash) : await passwordMatchesNobody(password, deps.config.passwordScryptLog2N);
  if (!right || !account) {
    const until = await lock.fail(now);
    return until ? { kind: 'locked', until, account } : { kind: 'refused', account };
  }
  await lock.clear();
  if (!account.confirmed_at) {
    await deps.db.transaction((trx: Knex.Transaction) => sendLink(deps, trx, tenant, account, 'confirm', now));
    return { kind: 'unconfirmed', account };
  }
  await deps.db.transaction(async (trx) => {
    await portalAccountRepo(trx, tenant).update(account.id, { last_sign_in_at: now, updated_at: now });
    await signedIn(trx, account);
  });
  return { kind: 'signed_in', account };
}
