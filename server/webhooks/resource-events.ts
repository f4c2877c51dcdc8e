/**
 * Resource events as the services emit them: load what the payloads need in a fixed number
 * of queries, whatever the number of records (bulk import emits many at once), then build
 * each payload. Called inside the caller's transaction, so a payload shows the change exactly
 * as it commits.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../http/auth';
import { addressRepo } from '../customers/address-repo';
import { customerRepo } from '../customers/customer-repo';
import { debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { locationRepo, type LocationRow } from '../locations/location-repo';
import { paymentMethodRepo } from '../payment-methods/payment-method-repo';
import type { WebhookEvent } from './emit';
import { customerPayload, debtAccountPayload, locationPayload, paymentPlanPayload, type PayloadContext } from './payloads';
import { groupBy } from '../collections';


/**
 * Everything about these customers that a payload shows: their addresses, payment methods,
 * all their debt accounts (a parent and its children always share the customer), and those
 * accounts' locations and plans. Six queries, one after the other on the transaction.
 */
export async function loadPayloadContext(db: Knex, tenant: Tenant, customerIds: string[]): Promise<PayloadContext> {
  const ids = [...new Set(customerIds)];
  const customers = await customerRepo(db, tenant).findMany(ids);
  const addresses = await addressRepo(db, tenant).forCustomers(ids);
  const methods = await paymentMethodRepo(db, tenant).forCustomers(ids);
  const accounts = await debtAccountRepo(db, tenant).forCustomers(ids);
  const locations = await locationRepo(db, tenant).findMany([...new Set(accounts.map((account) => account.location_id))]);
  const plans = await debtAccountRepo(db, tenant).plans(accounts.map((account) => account.id));
  return {
    customers: new Map(customers.map((row) => [row.id, row])),
    addresses: groupBy(addresses, (row) => row.customer_id),
    paymentMethods: groupBy(methods, (row) => row.customer_id),
    accountsOfCustomer: groupBy(accounts, (row) => row.customer_id),
    accounts: new Map(accounts.map((row) => [row.id, row])),
    children: groupBy(accounts, (row) => row.parent_id),
    locations: new Map(locations.map((row) => [row.id, row])),
    plans: new Map(plans.map((row) => [row.debt_account_id, row])),
  };
}

type CustomerEvent = 'customer.create' | 'customer.update' | 'customer.delete';
type AccountEvent = 'debt-account.create' | 'debt-account.update' | 'debt-account.delete';
type PlanEvent = 'payment-plan.create' | 'payment-plan.update' | 'payment-plan.delete';
type LocationEvent = 'location.create' | 'location.update' | 'location.delete';

export async function customerEvents(db: Knex, tenant: Tenant, name: CustomerEvent, customerIds: string[]): Promise<WebhookEvent[]> {
  const ctx = await loadPayloadContext(db, tenant, customerIds);
  return customerIds.map((id) => ({ name, data: customerPayload(id, ctx) }));
}

/**
 * Debt account events, and with `plans` the plan events of those accounts that have a plan.
 * The accounts are given as rows (a deleted one is read before it goes).
 */
export async function debtAccountEvents(
  db: Knex,
  tenant: Tenant,
  name: AccountEvent,
  accounts: Pick<DebtAccountRow, 'id' | 'customer_id'>[],
  plans?: PlanEvent,
): Promise<WebhookEvent[]> {
  const ctx = await loadPayloadContext(db, tenant, accounts.map((account) => account.customer_id));
  const events: WebhookEvent[] = [];
  for (const { id } of accounts) {
    if (!ctx.accounts.has(id)) continue;
    events.push({ name, data: debtAccountPayload(id, ctx) });
    if (plans && ctx.plans.has(id)) events.push({ name: plans, data: paymentPlanPayload(id, ctx) });
  }
  return events;
}

export async function locationEvents(db: Knex, tenant: Tenant, name: LocationEvent, rows: LocationRow[]): Promise<WebhookEvent[]> {
  const counts = await locationRepo(db, tenant).accountCounts(rows.map((row) => row.id));
  return rows.map((row) => ({ name, data: locationPayload(row, counts.get(row.id) ?? 0) }));
}
