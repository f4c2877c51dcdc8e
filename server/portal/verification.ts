/**
 * Verification of a session made with `verification: true`: before any page, the customer
 * proves who they are with one fact on file. Offered: the date of birth, the last 4 of the
 * SSN and the ZIP code of any of their addresses, each only when the customer has it on file
 * (a fact we do not hold cannot prove anything). An answer passes when every fact given
 * matches and at least one was given. Five wrong answers in a row lock the customer session
 * (in the database, for every browser that opened it) for 15 minutes.
 */
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { customerRepo } from '../customer-store/customer-repo';
import { addressRepo } from '../customer-store/address-repo';
import { browserSessionRepo } from './browser-session-repo';
import type { Visit } from './browser-sessions';
import { track } from './tracking';
import { clockTime, debtorZone } from './debtor-zone';

export const MAX_VERIFICATION_FAILURES = 5;
export const LOCK_MINUTES = 15;

export type Fact = 'date_of_birth' | 'ssn_last4' | 'postal_code';

export interface Offered {
  facts: Fact[];
  lockedUntil: Date | undefined;
}

export interface Answers {
  date_of_birth?: string;
  ssn_last4?: string;
  postal_code?: string;
}

async function lockedUntil(deps: AppDeps, visit: Visit): Promise<Date | undefined> {
  const row = await deps.db('customer_sessions').where({ id: visit.customerSession!.id }).first('verification_locked_until');
  const until = row?.verification_locked_until as Date | null | undefined;
  return until && until.getTime() > visit.now.getTime() ? until : undefined;
}

export async function offered(deps: AppDeps, visit: Visit): Promise<Offered> {
  const customer = await customerRepo(deps.db, visit.tenant).find(visit.browser.customer_id!);
  const addresses = await addressRepo(deps.db, visit.tenant).forCustomers([visit.browser.customer_id!]);
  const facts: Fact[] = [];
  if (customer?.date_of_birth) facts.push('date_of_birth');
  if (customer?.ssn_last4) facts.push('ssn_last4');
  if (addresses.some((address) => address.postal_code)) facts.push('postal_code');
  return { facts, lockedUntil: await lockedUntil(deps, visit) };
}

const lockedError = (until: Date, now: Date) =>
  new ApiError('rate_limited', `Too many wrong answers. Try again after ${until.toISOString()}.`, undefined, {
    'Retry-After': String(Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))),
  });

/**
 * What a locked person reads: until when (in the debtor's zone, and in minutes), and whom to ask meanwhile (the
 * organization that sent the link, by name).
 */
export async function lockMessage(deps: AppDeps, visit: Visit, until: Date): Promise<string> {
  const organization = await deps.db('organizations').where({ id: visit.tenant.organizationId }).first('name');
  const minutes = Math.max(1, Math.ceil((until.getTime() - visit.now.getTime()) / 60_000));
  const time = clockTime(until, await debtorZone(deps.db, visit.tenant, visit.browser.customer_id));
  const who = organization?.name ? `${organization.name}, who sent you this link` : 'the organization that sent you this link';
  return `For your security, this link is locked after ${MAX_VERIFICATION_FAILURES} wrong answers. Try again after ${time} (in ${minutes} minute${minutes === 1 ? '' : 's'}), or contact ${who}.`;
}

/** True when verified; false for a wrong answer; throws while locked (429) or for no answer (422). */
export async function verify(deps: AppDeps, visit: Visit, answers: Answers): Promise<boolean> {
  const { facts, lockedUntil: locked } = await offered(deps, visit);
  if (locked) throw lockedError(locked, visit.now);
  const given = facts.filter((fact) => (answers[fact] ?? '').trim() !== '');
  if (given.length === 0) throw ApiError.field('form', 'Answer at least one of the questions.');

  const customer = (await customerRepo(deps.db, visit.tenant).find(visit.browser.customer_id!))!;
  const zips = (await addressRepo(deps.db, visit.tenant).forCustomers([customer.id])).map((address) => address.postal_code);
  const matches = (fact: Fact): boolean => {
    const answer = answers[fact]!.trim();
    if (fact === 'date_of_birth') return answer === customer.date_of_birth;
    if (fact === 'ssn_last4') return /^\d{4}$/.test(answer) && answer === customer.ssn_last4;
    return /^\d{5}$/.test(answer) && zips.includes(answer);
  };
  const ok = given.every(matches);
  const session = visit.customerSession!;
  const base = { deviceId: visit.deviceId, occurredAt: visit.now, customerId: customer.id, debtAccountId: session.debt_account_id };
  if (ok) {
    await deps.db.transaction(async (trx) => {
      await trx('customer_sessions').where({ id: session.id }).update({ verification_failures: 0, verification_locked_until: null });
      await browserSessionRepo(trx).update(visit.browser.id, { verified_at: visit.now });
      await track(trx, deps.events, visit.tenant, [{ event: 'customer.session.verification.success', ...base }]);
    });
    return true;
  }
  // One statement counts the failure and, at the fifth, locks: two browsers failing at once both count.
  const lockAt = new Date(visit.now.getTime() + LOCK_MINUTES * 60_000);
  await deps.db.transaction(async (trx) => {
    await trx.raw(
      `UPDATE customer_sessions
          SET verification_locked_until = CASE WHEN verification_failures + 1 >= ? THEN ?::timestamptz ELSE verification_locked_until END,
              verification_failures = CASE WHEN verification_failures + 1 >= ? THEN 0 ELSE verification_failures + 1 END
        WHERE id = ?`,
      [MAX_VERIFICATION_FAILURES, lockAt, MAX_VERIFICATION_FAILURES, session.id],
    );
    await track(trx, deps.events, visit.tenant, [{ event: 'customer.session.verification.failed', ...base }]);
  });
  const nowLocked = await lockedUntil(deps, visit);
  if (nowLocked) throw lockedError(nowLocked, visit.now);
  return false;
}
