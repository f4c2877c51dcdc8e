/**
 * The customer operations: the rules the document states but a schema cannot check (a date
 * of birth not in the future, external_id unique per tenant, metadata update semantics, no
 * deletion while the customer has accounts), each change recorded as an event.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { externalIdUnique, isForeignKeyViolation, TAKEN } from '../db/tenant';
import { mergeMetadata } from '../kernel/metadata';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { addressRepo } from '../customer-store/address-repo';
import { addAddress, changeAddress } from './address-rules';
import { CUSTOMER_COLUMNS, customerRepo, type CustomerRow, type CustomerValues, CUSTOMERS } from '../customer-store/customer-repo';
import { todayUtc } from '../kernel/dates';
import { nowFor } from '../kernel/clock';
import { canonicalTimeZone } from '../kernel/time-zones';
import { preferenceOf, setAddressPreference } from './email-opt-outs';
import { loadCustomers } from './customer-loader';
import { readCustomer } from './customer-read';

type Schemas = components['schemas'];
type Customer = Schemas['Customer'];

export const CUSTOMER_INCLUDES = [
  'metadata',
  'addresses',
  'rules',
  'debt_accounts',
  'debt_accounts.metadata',
  'debt_accounts.location',
  'debt_accounts.locations',
  'payment_methods',
  'payment_methods.chargeable',
  'payment_methods.billing_address',
] as const;
export const DEFAULT_CUSTOMER_INCLUDES = ['metadata', 'addresses'] as const;

export type CustomerDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

/** An integer keeps its leading zeros: 427 is 0427. */
function ssnLast4(value: number | string | null | undefined): string | null | undefined {
  return typeof value === 'number' ? String(value).padStart(4, '0') : value;
}

type EmailFacts = Pick<CustomerRow, 'email_source' | 'email_work_address' | 'email_creditor_notice_date'>;

/**
 * The address's facts after a write: those given, else (for a new address, or a new
 * customer) the defaults, else the stored ones. They describe one address, so a new `email`
 * without them starts from the defaults.
 */
function emailFacts(body: Partial<Schemas['CustomerUpdate']>, stored: EmailFacts | undefined, newAddress: boolean): EmailFacts {
  const base: EmailFacts = stored && !newAddress ? stored : { email_source: 'other', email_work_address: false, email_creditor_notice_date: null };
  return {
    email_source: body.email_source ?? base.email_source,
    email_work_address: body.email_work_address ?? base.email_work_address,
    email_creditor_notice_date: body.email_creditor_notice_date !== undefined ? body.email_creditor_notice_date : body.email_source && body.email_source !== 'creditor' ? null : base.email_creditor_notice_date,
  };
}

/** Rules the document states but a schema cannot check; answers the time zone as the tz database spells it. */
function checkRules(body: { date_of_birth?: string | null; time_zone?: string | null }, now: Date, facts?: EmailFacts): { timeZone: string | null | undefined } {
  const errors: FieldErrors = {};
  if (body.date_of_birth && body.date_of_birth > todayUtc(now)) {
    errors.date_of_birth = ['must not be in the future'];
  }
  if (facts?.email_creditor_notice_date) {
    if (facts.email_source !== 'creditor') errors.email_creditor_notice_date = ['is recorded only for an address with email_source creditor'];
    else if (facts.email_creditor_notice_date > todayUtc(now)) errors.email_creditor_notice_date = ['must not be in the future'];
  }
  const timeZone = body.time_zone ? canonicalTimeZone(body.time_zone) : body.time_zone;
  if (body.time_zone && !timeZone) errors.time_zone = ['is not a known IANA time zone'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
  return { timeZone };
}

export function customerService({ db, events, clock }: CustomerDeps) {
  const load = async (trx: Knex, tenant: Tenant, row: CustomerRow, include: Set<string>) => (await loadCustomers(trx, tenant, [row], include, nowFor(clock, tenant)))[0]!;

  return {
    async list(tenant: Tenant, page: PageRequest, include: Set<string>): Promise<Listed<Customer>> {
      return listPage<CustomerRow, Customer>(customerRepo(db, tenant).query(), page, { columns: CUSTOMER_COLUMNS, table: CUSTOMERS }, (rows) =>
        loadCustomers(db, tenant, rows, include, nowFor(clock, tenant)),
      );
    },

    /** In one statement, two with its debt accounts (customer-read.ts). */
    async find(tenant: Tenant, key: string, include: Set<string>): Promise<Customer> {
      const customer = await readCustomer(db, tenant, key, include, nowFor(clock, tenant));
      if (!customer) throw ApiError.notFound('Customer');
      return customer;
    },

    async create(tenant: Tenant, body: Schemas['CustomerCreate'], include: Set<string>): Promise<Customer> {
      const facts = emailFacts(body, undefined, true);
      const { timeZone } = checkRules(body, nowFor(clock, tenant), facts);
      return externalIdUnique(CUSTOMERS, () =>
        db.transaction(async (trx) => {
          const customers = customerRepo(trx, tenant);
          if (body.external_id && (await customers.externalIdTaken(body.external_id))) throw ApiError.field('external_id', TAKEN);
          const row = await customers.insert({
            name: body.name,
            email: body.email,
            ...facts,
            // An address opted out before (on another customer record) stays opted out.
            ...(await preferenceOf(trx, tenant, body.email)),
            external_id: body.external_id ?? null,
            phone: body.phone ?? null,
            date_of_birth: body.date_of_birth ?? null,
            ssn_last4: ssnLast4(body.ssn_last4) ?? null,
            metadata: body.metadata ?? {},
            time_zone: timeZone ?? null,
          });
          if (body.address) await addAddress(trx, tenant, row.id, body.address);
          await events.record(trx, tenant, [{ name: 'customer.create', ids: [row.id] }]);
          return load(trx, tenant, row, include);
        }),
      );
    },

    async update(tenant: Tenant, key: string, body: Schemas['CustomerUpdate'], include: Set<string>): Promise<Customer> {
      const now = nowFor(clock, tenant);
      checkRules(body, now);
      return externalIdUnique(CUSTOMERS, () =>
        db.transaction(async (trx) => {
          const customers = customerRepo(trx, tenant);
          const row = await customers.find(key, { forUpdate: true });
          if (!row) throw ApiError.notFound('Customer');
          const email = body.email ?? row.email;
          const newAddress = body.email !== undefined && body.email.trim().toLowerCase() !== row.email.trim().toLowerCase();
          const facts = emailFacts(body, row, newAddress);
          const { timeZone } = checkRules(body, now, facts);
          if (body.external_id && (await customers.externalIdTaken(body.external_id, row.id))) {
            throw ApiError.field('external_id', TAKEN);
          }
          const changes: CustomerValues = {};
          if (body.name !== undefined) changes.name = body.name;
          if (body.email !== undefined) changes.email = body.email;
          Object.assign(changes, facts);
          // A new address brings its own opt-out state.
          if (newAddress) Object.assign(changes, await preferenceOf(trx, tenant, email));
          if (body.external_id !== undefined) changes.external_id = body.external_id;
          if (body.phone !== undefined) changes.phone = body.phone;
          if (body.date_of_birth !== undefined) changes.date_of_birth = body.date_of_birth;
          if (body.ssn_last4 !== undefined) changes.ssn_last4 = ssnLast4(body.ssn_last4) ?? null;
          if (body.metadata !== undefined) changes.metadata = mergeMetadata(row.metadata, body.metadata);
          if (timeZone !== undefined) changes.time_zone = timeZone;
          const preference = body.communication_preferences?.email;
          const others: string[] = [];
          if (preference) {
            const current = await preferenceOf(trx, tenant, email);
            // 12 CFR 1006.6(e), 1006.14(h): the consumer stops e-mail, and only the consumer takes it back.
            if (preference === 'allowed' && current.email_preference === 'opted_out') {
              throw ApiError.conflict('This address is opted out of e-mail; only the customer can opt back in, by the opt-out link of an e-mail.');
            }
            if (preference === 'opted_out') {
              const changed = await setAddressPreference(trx, tenant, { email, optedOut: true, by: 'api', customerId: row.id, now });
              others.push(...changed.filter((id) => id !== row.id));
              Object.assign(changes, await preferenceOf(trx, tenant, email));
            }
          }

          if (body.address?.id) {
            const address = await addressRepo(trx, tenant).find(row.id, body.address.id);
            if (!address) throw ApiError.field('address.id', 'is not an address of this customer');
            await changeAddress(trx, tenant, address, body.address, 'address.');
          } else if (body.address) {
            await addAddress(trx, tenant, row.id, { ...body.address, postal_code: body.address.postal_code! });
          }
          const updated = await customers.update(row.id, changes);
          await events.record(trx, tenant, [{ name: 'customer.update', ids: [row.id, ...others] }]);
          return load(trx, tenant, updated, include);
        }),
      );
    },

    async remove(tenant: Tenant, key: string): Promise<void> {
      const conflict = () => ApiError.conflict('This customer still has debt accounts; delete them first.');
      try {
        await db.transaction(async (trx) => {
          const customers = customerRepo(trx, tenant);
          const row = await customers.find(key, { forUpdate: true });
          if (!row) throw ApiError.notFound('Customer');
          if ((await debtAccountRepo(trx, tenant).countForCustomer(row.id)) > 0) throw conflict();
          // Recorded first: the payload shows the customer as it was just before deletion.
          await events.record(trx, tenant, [{ name: 'customer.delete', ids: [row.id] }]);
          await customers.delete(row.id);
        });
      } catch (error) {
        // An account created for this customer between the count and the delete: the foreign key refuses.
        throw isForeignKeyViolation(error) ? conflict() : error;
      }
    },
  };
}
