/**
 * GET /customers/{id} in one statement: the customer and what its answer shows (addresses,
 * payment methods, Portal account) as JSON sub-selects of its row, where the loader
 * (customer-loader.ts) reads each with a statement of its own; with `debt_accounts` included,
 * its accounts in a second statement sent at the same time (debt-account-read.ts), which finds
 * the customer by the same key.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { UUID } from '../db/tenant';
import { concurrently } from '../db/concurrently';
import { jsonOf, revive, type Shape } from '../db/json-rows';
import { ADDRESS_COLUMNS, type AddressRow } from '../customer-store/address-repo';
import { customerToApi } from '../customer-store/customer-mapper';
import { CUSTOMER_COLUMNS, type CustomerRow } from '../customer-store/customer-repo';
import { PAYMENT_METHOD_COLUMNS, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { paymentMethodToApi } from '../payment-methods/payment-method-mapper';
import { readDebtAccountsWhere } from '../debt-accounts/debt-account-read';

type Customer = components['schemas']['Customer'];

const ADDRESS: Shape = { columns: ADDRESS_COLUMNS, timestamps: ['created_at', 'updated_at'], bigints: [] };
const METHOD: Shape = { columns: PAYMENT_METHOD_COLUMNS, timestamps: ['created_at', 'updated_at'], bigints: [] };
const PORTAL: Shape = { columns: ['email', 'confirmed_at', 'last_sign_in_at'], timestamps: ['confirmed_at', 'last_sign_in_at'], bigints: [] };

/** Rows of `alias` of the customer's tenant. */
const ofTenant = (alias: string) => `${alias}.organization_id = customers.organization_id AND ${alias}.environment = customers.environment`;

/** The customer `{id|external_id}` of the tenant, as customerRepo.find (a UUID as id first, then as external_id). */
const BY_KEY = `customers.organization_id = ? AND customers.environment = ? AND (customers.id = ?::uuid OR customers.external_id = ?)
  ORDER BY customers.id = ?::uuid DESC NULLS LAST LIMIT 1`;

const statements = new Map<string, string>();
function statement(addresses: boolean, methods: boolean): string {
  const key = `${addresses}|${methods}`;
  let sql = statements.get(key);
  if (!sql) {
    sql = `SELECT ${CUSTOMER_COLUMNS.join(', ')},
      ${addresses ? `(SELECT coalesce(json_agg(${jsonOf('a', ADDRESS)} ORDER BY a.created_at, a.id), '[]') FROM customer_addresses a WHERE a.customer_id = customers.id AND ${ofTenant('a')})` : `'[]'::json`} AS addresses,
      ${methods ? `(SELECT coalesce(json_agg(${jsonOf('m', METHOD)} ORDER BY m.created_at, m.id), '[]') FROM payment_methods m WHERE m.customer_id = customers.id AND ${ofTenant('m')})` : `'[]'::json`} AS methods,
      (SELECT ${jsonOf('pa', PORTAL)} FROM portal_accounts pa WHERE pa.customer_id = customers.id AND ${ofTenant('pa')}) AS portal
    FROM customers WHERE ${BY_KEY}`;
    statements.set(key, sql);
  }
  return sql;
}

type Read = CustomerRow & { addresses: Record<string, unknown>[]; methods: Record<string, unknown>[]; portal: Record<string, unknown> | null };

const byKeyOf = (tenant: Tenant, key: string) => {
  const id = UUID.test(key) ? key : null;
  return [tenant.organizationId, tenant.environment, id, key, id];
};

/** The one statement's row: the customer with its relations as JSON (also what bench:api's bare handler sends). */
export async function readCustomerRow(
  db: Knex,
  tenant: Tenant,
  key: string,
  include: Set<string>,
): Promise<(Omit<Read, 'addresses'> & { addresses: AddressRow[] }) | undefined> {
  const billing = include.has('payment_methods.billing_address');
  const { rows } = await db.raw<{ rows: Read[] }>(statement(include.has('addresses') || billing, include.has('payment_methods')), byKeyOf(tenant, key));
  const row = rows[0];
  return row ? { ...row, addresses: row.addresses.map((address) => revive<AddressRow>(ADDRESS, address)) } : undefined;
}

/** The customer as the API shows it with `include`, or undefined when the tenant has none of that key. */
export async function readCustomer(db: Knex, tenant: Tenant, key: string, include: Set<string>, now: Date): Promise<Customer | undefined> {
  const billing = include.has('payment_methods.billing_address');
  const byKey = byKeyOf(tenant, key);
  const nested = new Set(['metadata', 'location', 'locations'].filter((relation) => include.has(`debt_accounts.${relation}`)));
  const [row, accounts] = await concurrently(
    db,
    () => readCustomerRow(db, tenant, key, include),
    () =>
      include.has('debt_accounts')
        ? readDebtAccountsWhere(db, tenant, { sql: `debt_accounts.customer_id = (SELECT customers.id FROM customers WHERE ${BY_KEY})`, bindings: byKey }, nested)
        : Promise.resolve(undefined),
  );
  if (!row) return undefined;
  const own = row.addresses;
  const primary = own.find((address) => address.is_primary) ?? null;
  const paymentMethods = row.methods.map((method) =>
    paymentMethodToApi(revive<PaymentMethodRow>(METHOD, method), {
      ...(include.has('payment_methods.chargeable') ? { chargeableAt: now } : {}),
      ...(billing ? { billingAddress: primary } : {}),
    }),
  );
  const portal = row.portal ? revive<{ email: string; confirmed_at: Date | null; last_sign_in_at: Date | null }>(PORTAL, row.portal) : null;
  return customerToApi(row, {
    include,
    addresses: own,
    paymentMethods,
    debtAccounts: accounts?.data ?? [],
    portalAccount: portal ? { email: portal.email, confirmed_at: portal.confirmed_at?.toISOString() ?? null, last_sign_in_at: portal.last_sign_in_at?.toISOString() ?? null } : null,
  });
}
