/**
 * Customers as API objects: the customers' own read model, which also reads, for `include`,
 * their debt accounts (through the accounts' loader) and their payment methods. Customers sit
 * above both folders, so the read runs downward.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { loadDebtAccounts } from '../debt-accounts/debt-account-loader';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { paymentMethodToApi } from '../payment-methods/payment-method-mapper';
import { paymentMethodRepo } from '../payment-methods/payment-method-repo';
import { addressRepo, type AddressRow } from '../customer-store/address-repo';
import { customerToApi } from '../customer-store/customer-mapper';
import type { CustomerRow } from '../customer-store/customer-repo';
import { groupBy } from '../kernel/collections';
import { portalAccountsOf } from './portal-account-view';

type Schemas = components['schemas'];
type Customer = Schemas['Customer'];

/** Customers as API objects, with the included relations loaded in one query each. */
export async function loadCustomers(db: Knex, tenant: Tenant, rows: CustomerRow[], include: Set<string>, now: Date): Promise<Customer[]> {
  const ids = rows.map((row) => row.id);
  const billing = include.has('payment_methods.billing_address');
  const addresses = groupBy(include.has('addresses') || billing ? await addressRepo(db, tenant).forCustomers(ids) : [], (row) => row.customer_id);
  const methods = groupBy(include.has('payment_methods') ? await paymentMethodRepo(db, tenant).forCustomers(ids) : [], (row) => row.customer_id);
  const accounts = include.has('debt_accounts') ? await debtAccountsOf(db, tenant, ids, include) : new Map<string, Schemas['DebtAccount'][]>();
  const portalAccounts = await portalAccountsOf(db, tenant, ids);
  return rows.map((row) => {
    const own: AddressRow[] = addresses.get(row.id) ?? [];
    const primary = own.find((address) => address.is_primary) ?? null;
    const paymentMethods = (methods.get(row.id) ?? []).map((method) =>
      paymentMethodToApi(method, {
        ...(include.has('payment_methods.chargeable') ? { chargeableAt: now } : {}),
        ...(billing ? { billingAddress: primary } : {}),
      }),
    );
    return customerToApi(row, { include, addresses: own, paymentMethods, debtAccounts: accounts.get(row.id) ?? [], portalAccount: portalAccounts.get(row.id) ?? null });
  });
}

/**
 * The customers' debt accounts, each with the relations named after `debt_accounts.` in the
 * customer's include (never the customer again: it is the one being read).
 */
async function debtAccountsOf(db: Knex, tenant: Tenant, customerIds: string[], include: Set<string>) {
  const rows = await debtAccountRepo(db, tenant).forCustomers(customerIds);
  const nested = new Set(['metadata', 'location', 'locations'].filter((relation) => include.has(`debt_accounts.${relation}`)));
  const accounts = await loadDebtAccounts(db, tenant, rows, nested);
  const byCustomer = new Map<string, Schemas['DebtAccount'][]>();
  rows.forEach((row, i) => byCustomer.set(row.customer_id, [...(byCustomer.get(row.customer_id) ?? []), accounts[i]!]));
  return byCustomer;
}
