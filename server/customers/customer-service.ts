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
import { mergeMetadata } from '../metadata';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { addressRepo } from '../customer-store/address-repo';
import { addAddress, changeAddress } from './address-rules';
import { CUSTOMER_COLUMNS, customerRepo, type CustomerRow, type CustomerValues, CUSTOMERS } from '../customer-store/customer-repo';
import { todayUtc } from '../dates';
import { nowFor } from '../kernel/clock';
import { canonicalTimeZone } from '../time-zones';
import { emailPreferenceChange } from './email-preference';
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

/** Rules the document states but a schema cannot check; answers the time zone as the tz database spells it. */
function checkRules(body: { date_of_birth?: string | null; time_zone?: string | null }, now: Date): { timeZone: string | null | undefined } {
  const errors: FieldErrors = {};
  if (body.date_of_birth && body.date_of_birth > todayUtc(now)) {
    errors.date_of_birth = ['must not be in the future'];
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
      const { timeZone } = checkRules(body, nowFor(clock, tenant));
      return externalIdUnique(CUSTOMERS, () =>
        db.transaction(async (trx) => {
          const customers = customerRepo(trx, tenant);
          if (body.external_id && (await customers.externalIdTaken(body.external_id))) throw ApiError.field('external_id', TAKEN);
          const row = await customers.insert({
            name: body.name,
            email: body.email,
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
      const { timeZone } = checkRules(body, now);
      return externalIdUnique(CUSTOMERS, () =>
        db.transaction(async (trx) => {
          const customers = customerRepo(trx, tenant);
          const row = await customers.find(key, { forUpdate: true });
          if (!row) throw ApiError.notFound('Customer');
          if (body.external_id && (await customers.externalIdTaken(body.external_id, row.id))) {
            throw ApiError.field('external_id', TAKEN);
          }
          const changes: CustomerValues = {};
          if (body.name !== undefined) changes.name = body.name;
          if (body.email !== undefined) changes.email = body.email;
          if (body.external_id !== undefined) changes.external_id = body.external_id;
          if (body.phone !== undefined) changes.phone = body.phone;
          if (body.date_of_birth !== undefined) changes.date_of_birth = body.date_of_birth;
          if (body.ssn_last4 !== undefined) changes.ssn_last4 = ssnLast4(body.ssn_last4) ?? null;
          if (body.metadata !== undefined) changes.metadata = mergeMetadata(row.metadata, body.metadata);
          if (timeZone !== undefined) changes.time_zone = timeZone;
          const preference = body.communication_preferences?.email;
          // 12 CFR 1006.6(e): the agency records the customer's opt-out (or its withdrawal) for them.
          if (preference && preference !== row.email_preference) Object.assign(changes, emailPreferenceChange(preference, 'api', now));

          if (body.address?.id) {
            const address = await addressRepo(trx, tenant).find(row.id, body.address.id);
            if (!address) throw ApiError.field('address.id', 'is not an address of this customer');
            await changeAddress(trx, tenant, address, body.address, 'address.');
          } else if (body.address) {
            await addAddress(trx, tenant, row.id, { ...body.address, postal_code: body.address.postal_code! });
          }
          const updated = await customers.update(row.id, changes);
          await events.record(trx, tenant, [{ name: 'customer.update', ids: [row.id] }]);
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
