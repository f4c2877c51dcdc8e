/**
 * Creating a Portal account, after the guest proved who they are (the Portal's verification
 * step): an e-mail (any address, not only the one on file) and a password. One account per
 * customer, one account per address in a tenant. The account signs in only once the address is
 * confirmed by the link sent to it.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { FieldErrors } from '../kernel/errors';
import { isUniqueViolation } from '../db/tenant';
import { hashPassword, passwordProblem } from './passwords';
import { CUSTOMER_HAS_ONE, EMAIL_TAKEN, portalAccountRepo, type PortalAccountRow } from './portal-account-repo';
import { sendLink, useLink, type LinkUse } from './account-links';

/** The Customer schema's e-mail: a plain address, at most 255 characters. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const normalEmail = (email: string) => email.trim().toLowerCase();

export type Registration = { ok: true; account: PortalAccountRow } | { ok: false; errors: FieldErrors };

export type Recorder = (trx: Knex.Transaction, account: PortalAccountRow) => Promise<void>;

function problems(email: string, password: string): FieldErrors {
  const errors: FieldErrors = {};
  if (email === '') errors.email = ['Enter your e-mail address.'];
  else if (email.length > 255 || !EMAIL.test(email)) errors.email = ['Enter an e-mail address like name@example.com.'];
  const problem = passwordProblem(password);
  if (problem) errors.password = [problem];
  return errors;
}

export async function register(deps: AppDeps, tenant: Tenant, customerId: string, input: { email: string; password: string }, now: Date, recorded: Recorder): Promise<Registration> {
  const email = normalEmail(input.email ?? '');
  const errors = problems(email, input.password ?? '');
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  if (await portalAccountRepo(deps.db, tenant).findByCustomer(customerId)) {
    return { ok: false, errors: { form: ['You already have a Portal account. Sign in, or use "Forgot password" if you do not remember it.'] } };
  }
  // Slow by design (scrypt): done before the transaction, which then holds no connection waiting.
  const passwordHash = await hashPassword(input.password, deps.config.passwordScryptLog2N);
  try {
    const account = await deps.db.transaction(async (trx) => {
      const row = await portalAccountRepo(trx, tenant).insert({ customer_id: customerId, email, password_hash: passwordHash, created_at: now });
      await sendLink(deps, trx, tenant, row, 'confirm', now);
      await recorded(trx, row);
      return row;
    });
    return { ok: true, account };
  } catch (error) {
    if (isUniqueViolation(error, EMAIL_TAKEN)) return { ok: false, errors: { email: ['This e-mail address already has a Portal account. Sign in, or use another address.'] } };
    if (isUniqueViolation(error, CUSTOMER_HAS_ONE)) return { ok: false, errors: { form: ['You already have a Portal account. Sign in instead.'] } };
    throw error;
  }
}

/** Opens the confirmation link: the address is confirmed (once; a later use of the link is refused). */
export async function confirmEmail(deps: AppDeps, token: string): Promise<LinkUse> {
  return useLink(deps, token, 'confirm', async (trx, { tenant, account, now }) => {
    if (!account.confirmed_at) await portalAccountRepo(trx, tenant).update(account.id, { confirmed_at: now, updated_at: now });
  });
}
