/**
 * The guest's way in: "Find my account" at the Portal's root. The root names the organization
 * (`?organization=<its id>`, and `&environment=sandbox` for its sandbox), as a session's
 * portal_url names it in `utm_source`. A guest gives a phone number or a first and last name,
 * and one more fact; the five combinations are the lookup flows of GET /debt-accounts/lookup
 * and match exactly as it does (debt-accounts/lookup.ts). "No match" and "wrong details" are
 * one answer. Tries are limited per IP address and per person looked for (the phone number,
 * or the names), counted in PostgreSQL so every server process shares the count.
 */
import type { Knex } from 'knex';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { createLimiter } from '../http/rate-limit';
import { lookupQuery, type LookupQuery } from '../debt-accounts/lookup';
import { DEBT_ACCOUNTS } from '../debt-accounts/debt-account-repo';
import { browserSessionRepo } from './browser-session-repo';
import type { Visit } from './browser-sessions';
import { track } from './tracking';

/** Per IP address: tries in 15 minutes. */
export const GUEST_TRIES_PER_IP = 20;
/** Per person looked for: wrong tries in 15 minutes. */
export const GUEST_TRIES_PER_PERSON = 5;
const WINDOW_SECONDS = 15 * 60;

export interface GuestAnswers {
  phone?: string;
  first_name?: string;
  last_name?: string;
  ssn_last4?: string;
  date_of_birth?: string;
  postal_code?: string;
}

export const NO_MATCH = 'We could not find an account with those details. Check them and try again.';

/** The lookup flow the filled-in fields make, or the form's error. */
export function flowOf(answers: GuestAnswers): LookupQuery {
  const has = (field: keyof GuestAnswers) => (answers[field] ?? '').trim() !== '';
  const byPhone = has('phone');
  const byName = has('first_name') && has('last_name');
  const errors: Record<string, string[]> = {};
  if (!byPhone && !byName) errors.phone = ['Enter your phone number, or your first and last name.'];
  if (has('phone') && answers.phone!.replace(/\D/g, '').length < 10) errors.phone = ['Enter the 10 digits of your phone number.'];
  if (has('ssn_last4') && !/^\d{4}$/.test(answers.ssn_last4!.trim())) errors.ssn_last4 = ['Enter the last 4 digits of your SSN.'];
  if (has('date_of_birth') && !/^\d{4}-\d{2}-\d{2}$/.test(answers.date_of_birth!.trim())) errors.date_of_birth = ['Enter your date of birth.'];
  if (has('postal_code') && !/^\d{5}$/.test(answers.postal_code!.trim())) errors.postal_code = ['Enter the 5 digits of your ZIP code.'];
  const second = has('ssn_last4') ? 'ssn_last4' : has('date_of_birth') ? 'date_of_birth' : has('postal_code') && byPhone ? 'postal_code' : undefined;
  if (!second) errors.ssn_last4 ??= [byPhone ? 'Enter the last 4 of your SSN, your date of birth or your ZIP code.' : 'Enter the last 4 of your SSN or your date of birth.'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  const value = (field: keyof GuestAnswers) => answers[field]!.trim();
  if (byPhone) return { lookup_flow_type: `phone_${second}`, phone: value('phone'), [second!]: value(second!) };
  return { lookup_flow_type: `first_name_last_name_${second}`, first_name: value('first_name'), last_name: value('last_name'), [second!]: value(second!) };
}

function personKey(tenant: Tenant, query: LookupQuery): string {
  const who = query.phone ? `phone:${query.phone.replace(/\D/g, '').slice(-10)}` : `name:${query.first_name!.toLowerCase()}|${query.last_name!.toLowerCase()}`;
  return `${tenant.organizationId}:${tenant.environment}:${who}`;
}

const tooMany = (rejection: RateLimiterRes) =>
  new ApiError('rate_limited', 'Too many tries. Wait a few minutes and try again.', undefined, {
    'Retry-After': String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))),
  });

export function guestFinder(deps: AppDeps) {
  const perIp: RateLimiterPostgres = createLimiter(deps.db, { points: GUEST_TRIES_PER_IP, durationSeconds: WINDOW_SECONDS, keyPrefix: 'portal-guest-ip' });
  const perPerson: RateLimiterPostgres = createLimiter(deps.db, { points: GUEST_TRIES_PER_PERSON, durationSeconds: WINDOW_SECONDS, keyPrefix: 'portal-guest-person' });

  /** Finds the guest's customer; true when found (the browser session may then pay its accounts). */
  return async function find(visit: Visit, ip: string, answers: GuestAnswers): Promise<boolean> {
    const query = flowOf(answers);
    const key = personKey(visit.tenant, query);
    try {
      await perIp.consume(ip);
      const person = await perPerson.get(key);
      if (person && person.remainingPoints <= 0) throw person;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw tooMany(rejection);
      throw rejection;
    }
    const match: { id: string; customer_id: string } | undefined = await lookupQuery(deps.db, visit.tenant, query)
      .whereNull(`${DEBT_ACCOUNTS}.parent_id`)
      .whereNot(`${DEBT_ACCOUNTS}.status`, 'archived')
      .orderBy([{ column: `${DEBT_ACCOUNTS}.created_at` }, { column: `${DEBT_ACCOUNTS}.id` }])
      .first(`${DEBT_ACCOUNTS}.id`, `${DEBT_ACCOUNTS}.customer_id`);
    const base = { deviceId: visit.deviceId, occurredAt: visit.now };
    if (!match) {
      await perPerson.penalty(key, 1).catch(() => undefined);
      await track(deps.db, deps.events, visit.tenant, [{ event: 'guest.customer.checkout.verification.failed', ...base }]);
      return false;
    }
    await deps.db.transaction(async (trx: Knex.Transaction) => {
      await browserSessionRepo(trx).update(visit.browser.id, { customer_id: match.customer_id, debt_account_id: match.id, verified_at: visit.now });
      await track(trx, deps.events, visit.tenant, [
        { event: 'guest.customer.checkout.verification.success', ...base, customerId: match.customer_id, debtAccountId: match.id },
      ]);
    });
    return true;
  };
}
