/**
 * Many account families locked at once, for a batch of due work: balances.ts's one family lock
 * (`lockFamilyRows`, in FAMILY_LOCK_ORDER: heads by id, then children by parent, oldest first)
 * and its facts (`familiesOf`), in one statement per tenant (plus one for the facts) instead of
 * per account. Tenants go in one fixed order too, so two batches, or a batch and a single
 * charge, queue rather than deadlock.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { DEBT_ACCOUNTS } from '../debt-accounts/debt-account-repo';
import { familiesOf, lockFamilyRows, type LockedFamily } from './balances';

/** One tenant's key in maps of work from many tenants. */
export const tenantKey = (tenant: Tenant) => `${tenant.organizationId}:${tenant.environment}`;

/** One account family's key (its head's id) in maps of work from many tenants. */
export const familyKey = (tenant: Tenant, head: string) => `${tenantKey(tenant)}:${head}`;

/**
 * The families of `wanted` (accounts by id, each with its tenant), locked; answers each found
 * account's family by account id. `terms` (default true): with the facts the payment terms read
 * (as lockAccount); false: only what recording an answer needs (charge-steps.ts `recordAnswers`). Call it once per
 * transaction, before any other lock of these families is taken.
 */
export async function lockFamilies(trx: Knex.Transaction, wanted: { tenant: Tenant; accountId: string }[], { terms = true }: { terms?: boolean } = {}): Promise<Map<string, LockedFamily>> {
  const byTenant = new Map<string, { tenant: Tenant; ids: Set<string> }>();
  for (const { tenant, accountId } of wanted) {
    const entry = byTenant.get(tenantKey(tenant)) ?? byTenant.set(tenantKey(tenant), { tenant, ids: new Set() }).get(tenantKey(tenant))!;
    entry.ids.add(accountId);
  }
  const locked = new Map<string, LockedFamily>();
  for (const key of [...byTenant.keys()].sort()) {
    const { tenant, ids } = byTenant.get(key)!;
    const { rows, asked } = await lockFamilyRows(trx, tenant, scoped(trx, DEBT_ACCOUNTS, tenant).whereIn('id', [...ids]).select('id', 'parent_id'));
    for (const [id, family] of await familiesOf(trx, tenant, rows, asked, terms)) locked.set(id, family);
  }
  return locked;
}
