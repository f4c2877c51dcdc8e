/**
 * GET /debt-accounts/lookup: the accounts of the customers whose details match, by one of
 * five flows. Matching uses columns PostgreSQL keeps itself (migration 002: phone digits,
 * first and last name lowercased) and their per-tenant indexes.
 */
import type { Request } from 'express';
import type { Knex } from 'knex';
import type { Tenant } from '../http/auth';
import { ApiError } from '../http/errors';
import { envelope, pageRequest, paginate, type Page } from '../http/pagination';
import { scoped } from '../db/tenant';
import { ADDRESSES } from '../customers/address-repo';
import { CUSTOMERS } from '../customers/customer-repo';
import type { components } from '../../generated/schema';
import { loadDebtAccounts } from './debt-account-loader';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from './debt-account-repo';

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

export async function lookupDebtAccounts(
  db: Knex,
  tenant: Tenant,
  req: Request,
  include: Set<string>,
): Promise<Page<components['schemas']['DebtAccount']>> {
  const query = req.query as Record<string, string | undefined>;
  const fields = LOOKUP_FLOWS[query.lookup_flow_type!]!;
  const missing = fields.filter((field) => !query[field]);
  if (missing.length > 0) {
    throw ApiError.invalid(Object.fromEntries(missing.map((field) => [`query.${field}`, [`is required by lookup_flow_type ${query.lookup_flow_type}`]])));
  }
  const customers = matchingCustomers(db, tenant, fields, (field) => query[field]!);
  const accounts = debtAccountRepo(db, tenant).query().whereIn(`${DEBT_ACCOUNTS}.customer_id`, customers);
  const page = pageRequest(req);
  const { total, rows } = await paginate<DebtAccountRow>(accounts, page, DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS);
  return envelope(req, page, total, rows, await loadDebtAccounts(db, tenant, rows, include));
}
