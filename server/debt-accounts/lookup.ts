/**
 * GET /debt-accounts/lookup: the accounts of the customers whose details match, by one of
 * five flows. Matching uses columns PostgreSQL keeps itself (migration 002: phone digits,
 * first and last name lowercased) and their per-tenant indexes.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { scoped } from '../db/tenant';
import { ADDRESSES } from '../customer-store/address-repo';
import { CUSTOMERS } from '../customer-store/customer-repo';
import type { paths } from '../../generated/schema';
import { DEBT_ACCOUNTS, debtAccountRepo } from './debt-account-repo';
import type { AccountFilter } from './debt-account-read';

type Field = 'phone' | 'ssn_last4' | 'date_of_birth' | 'postal_code' | 'first_name' | 'last_name';

export const LOOKUP_FLOWS: Record<string, Field[]> = {
  phone_ssn_last4: ['phone', 'ssn_last4'],
  phone_date_of_birth: ['phone', 'date_of_birth'],
  phone_postal_code: ['phone', 'postal_code'],
  first_name_last_name_ssn_last4: ['first_name', 'last_name', 'ssn_last4'],
  first_name_last_name_date_of_birth: ['first_name', 'last_name', 'date_of_birth'],
};

function matchingCustomers(db: Knex, tenant: Tenant, fields: Field[], value: (field: Field) => string): Knex.QueryBuilder {
  const customers = scoped(db, CUSTOMERS, tenant).select(`${CUSTOMERS}.id`);
  for (const field of fields) {
    const given = value(field);
    switch (field) {
      case 'phone':
        customers.where(`${CUSTOMERS}.phone_digits`, given.replace(/\D/g, '').slice(-10));
        break;
      case 'ssn_last4':
        customers.where(`${CUSTOMERS}.ssn_last4`, given.padStart(4, '0'));
        break;
      case 'date_of_birth':
        customers.where(`${CUSTOMERS}.date_of_birth`, given);
        break;
      case 'first_name':
        customers.where(`${CUSTOMERS}.first_name_lower`, given.trim().toLowerCase());
        break;
      case 'last_name':
        customers.where(`${CUSTOMERS}.last_name_lower`, given.trim().toLowerCase());
        break;
      case 'postal_code':
        customers.whereExists((sub) =>
          sub.select(db.raw('1')).from(ADDRESSES).whereRaw(`${ADDRESSES}.customer_id = ${CUSTOMERS}.id`).andWhere(`${ADDRESSES}.postal_code`, given),
        );
        break;
    }
  }
  return customers;
}

/** The lookup's query parameters, as the strings the request carried (the validator checked them). */
export type LookupQuery = { [K in keyof NonNullable<paths['/debt-accounts/lookup']['get']['parameters']['query']>]?: string };

/**
 * The tenant's accounts of the matching customers, as a query to page through. The flow
 * names the fields it needs; one that is missing is a 422 on its query parameter.
 */
export function lookupQuery(db: Knex, tenant: Tenant, query: LookupQuery): Knex.QueryBuilder {
  return debtAccountRepo(db, tenant).query().whereIn(`${DEBT_ACCOUNTS}.customer_id`, customersOf(db, tenant, query));
}

/** The same accounts as a page's filter (debt-account-read.ts): the lookup in one statement. */
export function lookupFilter(db: Knex, tenant: Tenant, query: LookupQuery): AccountFilter {
  const { sql, bindings } = customersOf(db, tenant, query).toSQL();
  return { sql: `${DEBT_ACCOUNTS}.customer_id IN (${sql})`, bindings };
}

function customersOf(db: Knex, tenant: Tenant, query: LookupQuery): Knex.QueryBuilder {
  const flow = query.lookup_flow_type!;
  const fields = LOOKUP_FLOWS[flow]!;
  const missing = fields.filter((field) => !query[field]);
  if (missing.length > 0) {
    throw ApiError.invalid(Object.fromEntries(missing.map((field) => [`query.${field}`, [`is required by lookup_flow_type ${flow}`]])));
  }
  return matchingCustomers(db, tenant, fields, (field) => String(query[field]));
}
