/** Debt accounts as API objects, with their relations loaded in one query each, whatever the number of accounts. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { concurrently } from '../db/concurrently';
import { customerRepo } from '../customer-store/customer-repo';
import { locationRepo } from '../locations/location-repo';
import { debtAccountRepo, type DebtAccountRow } from './debt-account-repo';
import { debtAccountToApi } from './debt-account-mapper';
import { groupBy } from '../kernel/collections';
import { latestOfAccounts } from '../charge-store/charge-repo';
import { autopaysOf } from './account-autopay';
import { scoped } from '../db/tenant';
import type { AccountDocument } from './debt-account-mapper';
import { disputeRepo } from '../dispute-store/dispute-repo';
import { loadDisputes } from '../dispute-store/dispute-mapper';
import { readSettings } from '../settings/settings-service';

/** How many charges and transactions an account read embeds; the rest are paged by /charges and /transactions. */
export const EMBEDDED_PAYMENTS = 10;

export const DEBT_ACCOUNT_INCLUDES = ['customer', 'location', 'locations', 'metadata'] as const;

const byKey = <T, K>(rows: T[], key: (row: T) => K) => new Map(rows.map((row) => [key(row), row]));

export async function loadDebtAccounts(
  db: Knex,
  tenant: Tenant,
  rows: DebtAccountRow[],
  include: Set<string>,
): Promise<components['schemas']['DebtAccount'][]> {
  const accounts = debtAccountRepo(db, tenant);
  const locations = locationRepo(db, tenant);
  const ids = rows.map((row) => row.id);
  const counted = include.has('location') || include.has('locations');
  const locationsOf = (locationIds: string[]) =>
    concurrently(
      db,
      () => locations.findMany(locationIds),
      () => (counted ? locations.accountCounts(locationIds) : Promise.resolve(new Map<string, number>())),
    );
  // The primary location is always needed (external_company_id is its external_id); it is read
  // at once with the rest, and an additional location not among them afterwards (rare).
  const primaryIds = [...new Set(rows.map((row) => row.location_id))];
  const [links, [locationRows, usage], plans, customers, payments, autopays, documents, disputeRows, settings] = await concurrently(
    db,
    () => (include.has('locations') ? accounts.additionalLocations(ids) : Promise.resolve([])),
    () => locationsOf(primaryIds),
    () => accounts.plans(ids),
    () => (include.has('customer') ? customerRepo(db, tenant).findMany([...new Set(rows.map((row) => row.customer_id))]) : Promise.resolve([])),
    () => latestOfAccounts(db, tenant, ids, EMBEDDED_PAYMENTS),
    () => autopaysOf(db, tenant, ids),
    // The documents shown to the customer (spec 6.4's {id, name, created_at}), read from their table.
    (): Promise<AccountDocument[]> =>
      scoped(db, 'documents', tenant).whereIn('debt_account_id', ids).whereNot('status', 'voided').orderBy([{ column: 'created_at' }, { column: 'id' }]).select('id', 'debt_account_id', 'name', 'created_at'),
    () => disputeRepo(db, tenant).ofAccounts(ids),
    () => readSettings(db, tenant),
  );
  const disputes = await loadDisputes(db, tenant, disputeRows, settings.dispute_hold);
  const others = [...new Set(links.map((link) => link.location_id))].filter((id) => !primaryIds.includes(id));
  if (others.length > 0) {
    const [moreRows, moreUsage] = await locationsOf(others);
    locationRows.push(...moreRows);
    for (const [id, count] of moreUsage) usage.set(id, count);
  }
  const additional = new Map([...groupBy(links, (link) => link.debt_account_id)].map(([id, rows]) => [id, rows.map((link) => link.location_id)]));
  const relations = {
    include,
    customers: byKey(customers, (c) => c.id),
    locations: byKey(locationRows, (l) => l.id),
    additional,
    plans: byKey(plans, (p) => p.debt_account_id),
    autopays: byKey(autopays, (a) => a.debt_account_id),
    usage,
    charges: groupBy(payments.charges, (c) => c.debt_account_id),
    transactions: groupBy(payments.transactions, (t) => t.debt_account_id),
    documents: groupBy(documents, (d) => d.debt_account_id),
    disputes: groupBy(disputes, (d) => d.debt_account_id),
  };
  return rows.map((row) => debtAccountToApi(row, relations));
}
