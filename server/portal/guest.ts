/**
 * The guest's way in: "Find my account" at the Portal's root. The root names the organization
 * (`?organization=<its id>`, and `&environment=sandbox` for its sandbox), as a session's
 * portal_url names it in `utm_source`. A guest gives a phone number or a first and last name,
 * and one more fact; the five combinations are the lookup flows of GET /debt-accounts/lookup
 * and match exactly as it does (debt-accounts/lookup.ts). "No match" and "wrong details" are
 * one answer. Tries are limited per IP address and per person looked for (the phone number,
 * or the names), counted in PostgreSQL so every server process shares the count. The same
 * step and limits serve "Create an account" (its own events) and "Pay with your account number"
 * (the account's number and one fact, counted per number).
 */
import type { Knex } from 'knex';
import { RateLimiterRes, type RateLimiterPostgres } from 'rate-limiter-flexible';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { createLimiter } from '../http/rate-limit';
import { lookupQuery, type LookupQuery } from '../debt-accounts/lookup';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { customerRepo } from '../customer-store/customer-repo';
import { addressRepo } from '../customer-store/address-repo';
import type { EventName } from '../events/events';
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

/** The events a guest's verification step reports: "Find my account" by default. */
export interface GuestStep {
  success: EventName;
  failed: EventName;
}
export const FIND_MY_ACCOUNT: GuestStep = { success: 'guest.customer.checkout.verification.success', failed: 'guest.customer.checkout.verification.failed' };
const ONE_STEP_CHECKOUT: GuestStep = { success: 'guest.customer.checkout.single-step.verification.success', failed: 'guest.customer.checkout.single-step.verification.failed' };

export interface AccountNumberAnswers {
  account_number?: string;
  ssn_last4?: string;
  date_of_birth?: string;
  postal_code?: string;
}

type Match = { id: string; customer_id: string };

export function guestFinder(deps: AppDeps) {
  const perIp: RateLimiterPostgres = createLimiter(deps.db, { points: GUEST_TRIES_PER_IP, durationSeconds: WINDOW_SECONDS, keyPrefix: 'portal-guest-ip' });
  const perPerson: RateLimiterPostgres = createLimiter(deps.db, { points: GUEST_TRIES_PER_PERSON, durationSeconds: WINDOW_SECONDS, keyPrefix: 'portal-guest-person' });

  /** One try under the limits: a match ties the browser session to the customer and account. */
  async function attempt(visit: Visit, ip: string, key: string, step: GuestStep, match: () => Promise<Match | undefined>): Promise<Match | undefined> {
    try {
      await perIp.consume(ip);
      const person = await perPerson.get(key);
      if (person && person.remainingPoints <= 0) throw person;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw tooMany(rejection);
      throw rejection;
    }
    const found = await match();
    const base = { deviceId: visit.deviceId, occurredAt: visit.now };
    if (!found) {
      await perPerson.penalty(key, 1).catch(() => undefined);
      await track(deps.db, deps.events, visit.tenant, [{ event: step.failed, ...base }]);
      return undefined;
    }
    await deps.db.transaction(async (trx: Knex.Transaction) => {
      await browserSessionRepo(trx).update(visit.browser.id, { customer_id: found.customer_id, debt_account_id: found.id, verified_at: visit.now });
      await track(trx, deps.events, visit.tenant, [{ event: step.success, ...base, customerId: found.customer_id, debtAccountId: found.id }]);
    });
    return found;
  }

  return {
    /** Finds the guest's customer; true when found (the browser session may then pay its accounts). */
    async find(visit: Visit, ip: string, answers: GuestAnswers, step: GuestStep = FIND_MY_ACCOUNT): Promise<boolean> {
      const query = flowOf(answers);
      const found = await attempt(visit, ip, personKey(visit.tenant, query), step, () =>
        lookupQuery(deps.db, visit.tenant, query)
          .whereNull(`${DEBT_ACCOUNTS}.parent_id`)
          .whereNot(`${DEBT_ACCOUNTS}.status`, 'archived')
          .orderBy([{ column: `${DEBT_ACCOUNTS}.created_at` }, { column: `${DEBT_ACCOUNTS}.id` }])
          .first(`${DEBT_ACCOUNTS}.id`, `${DEBT_ACCOUNTS}.customer_id`),
      );
      return Boolean(found);
    },

    /**
     * One-step checkout: the account's number (its `external_account_number`, or its
     * `external_id`) and one fact of its customer; answers the account to pay (a child's
     * parent: the customer deals with the parent), or undefined.
     */
    async findByAccountNumber(visit: Visit, ip: string, answers: AccountNumberAnswers): Promise<string | undefined> {
      const { number, facts } = accountNumberForm(answers);
      const key = `${visit.tenant.organizationId}:${visit.tenant.environment}:account:${number.toLowerCase()}`;
      const found = await attempt(visit, ip, key, ONE_STEP_CHECKOUT, async () => {
        const candidates: DebtAccountRow[] = await debtAccountRepo(deps.db, visit.tenant)
          .query()
          .where((q: Knex.QueryBuilder) => q.where(`${DEBT_ACCOUNTS}.external_account_number`, number).orWhere(`${DEBT_ACCOUNTS}.external_id`, number))
          .whereNot(`${DEBT_ACCOUNTS}.status`, 'archived')
          .select(DEBT_ACCOUNT_COLUMNS);
        for (const account of candidates) {
          if (!(await factsMatch(deps, visit.tenant, account.customer_id, facts))) continue;
          const payable = account.parent_id ? await debtAccountRepo(deps.db, visit.tenant).find(account.parent_id) : account;
          if (payable && payable.status !== 'archived') return { id: payable.id, customer_id: payable.customer_id };
        }
        return undefined;
      });
      return found?.id;
    },
  };
}

type Facts = Pick<AccountNumberAnswers, 'ssn_last4' | 'date_of_birth' | 'postal_code'>;

/** The one-step form's fields, or its 422: the number and at least one fact, each well-formed. */
function accountNumberForm(answers: AccountNumberAnswers): { number: string; facts: Facts } {
  const value = (field: keyof AccountNumberAnswers) => (answers[field] ?? '').trim();
  const errors: Record<string, string[]> = {};
  if (value('account_number') === '') errors.account_number = ['Enter your account number.'];
  else if (value('account_number').length > 255) errors.account_number = ['Enter the account number from your statement.'];
  if (value('ssn_last4') && !/^\d{4}$/.test(value('ssn_last4'))) errors.ssn_last4 = ['Enter the last 4 digits of your SSN.'];
  if (value('date_of_birth') && !/^\d{4}-\d{2}-\d{2}$/.test(value('date_of_birth'))) errors.date_of_birth = ['Enter your date of birth.'];
  if (value('postal_code') && !/^\d{5}$/.test(value('postal_code'))) errors.postal_code = ['Enter the 5 digits of your ZIP code.'];
  if (!value('ssn_last4') && !value('date_of_birth') && !value('postal_code')) errors.ssn_last4 ??= ['Enter the last 4 of your SSN, your date of birth or your ZIP code.'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  const facts: Facts = {};
  for (const field of ['ssn_last4', 'date_of_birth', 'postal_code'] as const) if (value(field)) facts[field] = value(field);
  return { number: value('account_number'), facts };
}

/** Every fact given matches the customer on file (a ZIP code: any of their addresses). */
async function factsMatch(deps: AppDeps, tenant: Tenant, customerId: string, facts: Facts): Promise<boolean> {
  const customer = await customerRepo(deps.db, tenant).find(customerId);
  if (!customer) return false;
  if (facts.ssn_last4 !== undefined && facts.ssn_last4 !== customer.ssn_last4) return false;
  if (facts.date_of_birth !== undefined && facts.date_of_birth !== customer.date_of_birth) return false;
  if (facts.postal_code !== undefined) {
    const zips = (await addressRepo(deps.db, tenant).forCustomers([customerId])).map((address) => address.postal_code);
    if (!zips.includes(facts.postal_code)) return false;
  }
  return true;
}
