/** Debt accounts as API objects, with their relations loaded in one query each, whatever the number of accounts. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../http/auth';
import { concurrently } from '../db/concurrently';
import { customerRepo } from '../customers/customer-repo';
import { locationRepo } from '../locations/location-repo';
import { debtAccountRepo, type DebtAccountRow } from './debt-account-repo';
import { debtAccountToApi } from './debt-account-mapper';
import { groupBy } from '../collections';
import { latestOfAccounts } from '../payments/charge-repo';

/** How many charges and transactions an account read embeds; the rest are paged by /charges and /transactions. */
const EMBEDDED_PAYMENTS = 10;

export const DEBT_ACCOUNT_INCLUDES = ['customer', 'location', 'locations', 'metadata'] as const;

const byKey = <T, K>(rows: T[], key: (row: T) => K) => new Map(rows.map((row) => [key(row), row]));

export async function loadDebtAccounts(
  db: Knex,
  tenant: Tenant,
  rows: DebtAccountRow[],
  include: Set<string>,
): Promise<components['schemas']['DebtAccount'][]> {
  const accounts = debtAccountRepo(db, tenant);
  const ids = rows.map((row) => row.id);
  const links = include.has('locations') ? await accounts.additionalLocations(ids) : [];
  const additional = new Map([...groupBy(links, (link) => link.debt_account_id)].map(([id, rows]) => [id, rows.map((link) => link.location_id)]));
  // The primary location is always needed: external_company_id is its external_id.
  const locationIds = [...new Set([...rows.map((row) => row.location_id), ...links.map((link) => link.location_id)])];
  const locations = locationRepo(db, tenant);
  const [locationRows, usage, plans, customers, payments] = await concurrently(
    db,
    () => locations.findMany(locationIds),
    () => (include.has('location') || include.has('locations') ? locations.accountCounts(locationIds) : Promise.resolve(new Map<string, number>())),
    () => accounts.plans(ids),
    () => (include.has('customer') ? customerRepo(db, tenant).findMany([...new Set(rows.map((row) => row.customer_id))]) : Promise.resolve([])),
    () => latestOfAccounts(db, tenant, ids, EMBEDDED_PAYMENTS),
  );
  const relations = {
    include,
    customers: byKey(customers, (c) => c.id),
    locations: byKey(locationRows, (l) => l.id),
    additional,
    plans: byKey(plans, (p) => p.debt_account_id),
    usage,
    charges: groupBy(payments.charges, (c) => c.debt_account_id),
    transactions: groupBy(payments.transactions, (t) => t.debt_account_id),
  };
  return rows.map((row) => debtAccountToApi(row, relations));
}
