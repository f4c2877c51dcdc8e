/**
 * Many account families locked at once, for a batch of due work (balances.ts's `lockAccount`
 * for one family, in a handful of statements per batch instead of per account). The same
 * locks in the same order as `lockAccount` takes them for each family: the head (a parent, or
 * an account without one) first, then its children, so a batch and a single charge queue rather
 * than deadlock; the heads of a batch in one fixed order (tenant, then head id), so two batches
 * do not deadlock either. The same facts, too: the dispute hold (disputes/dispute-hold-fact.ts,
 * asked per family only where an open dispute exists) and what the family's `processing` charges
 * reserve.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { disputeRepo } from '../dispute-store/dispute-repo';
import { disputeHoldOf } from '../disputes/dispute-hold-fact';
import { reservedByHead, type LockedFamily } from './balances';

const tenantKey = (tenant: Tenant) => `${tenant.organizationId}:${tenant.environment}`;

/**
 * The families of `wanted` (accounts by id, each with its tenant), locked; answers each found
 * account's family by account id. Call it once per transaction, before any other lock of these
 * families is taken.
 */
export async function lockFamilies(trx: Knex.Transaction, wanted: { tenant: Tenant; accountId: string }[]): Promise<Map<string, LockedFamily>> {
  const byTenant = new Map<string, { tenant: Tenant; ids: Set<string> }>();
  for (const { tenant, accountId } of wanted) {
    const entry = byTenant.get(tenantKey(tenant)) ?? byTenant.set(tenantKey(tenant), { tenant, ids: new Set() }).get(tenantKey(tenant))!;
    entry.ids.add(accountId);
  }
  const locked = new Map<string, LockedFamily>();
  for (const key of [...byTenant.keys()].sort()) {
    const { tenant, ids } = byTenant.get(key)!;
    for (const [id, family] of await lockFamiliesOf(trx, tenant, [...ids])) locked.set(id, family);
  }
  return locked;
}

async function lockFamiliesOf(trx: Knex.Transaction, tenant: Tenant, ids: string[]): Promise<Map<string, LockedFamily>> {
  const accounts = debtAccountRepo(trx, tenant);
  // Unlocked: whose family each account is in.
  const peeks = (await scoped(trx, DEBT_ACCOUNTS, tenant).whereIn('id', ids).select('id', 'parent_id')) as { id: string; parent_id: string | null }[];
  if (peeks.length === 0) return new Map();
  const heads = [...new Set(peeks.map((peek) => peek.parent_id ?? peek.id))].sort();
  // The heads first, in id order (the lock is taken row by row as they come out sorted).
  await scoped(trx, DEBT_ACCOUNTS, tenant).whereIn('id', heads).orderBy('id').forUpdate().select('id');
  const rows = (await accounts
    .query()
    .whereIn(`${DEBT_ACCOUNTS}.id`, ids)
    .orderBy(`${DEBT_ACCOUNTS}.id`)
    .forUpdate(DEBT_ACCOUNTS)
    .select(DEBT_ACCOUNT_COLUMNS)) as DebtAccountRow[];
  // A charge on a parent takes from its children: theirs locked too, oldest first per parent.
  const parents = rows.filter((row) => row.parent_id === null).map((row) => row.id);
  const children =
    parents.length === 0
      ? []
      : ((await accounts
          .query()
          .whereIn(`${DEBT_ACCOUNTS}.parent_id`, parents)
          .orderBy([
            { column: `${DEBT_ACCOUNTS}.parent_id`, order: 'asc' },
            { column: `${DEBT_ACCOUNTS}.created_at`, order: 'asc' },
            { column: `${DEBT_ACCOUNTS}.id`, order: 'asc' },
          ])
          .forUpdate(DEBT_ACCOUNTS)
          .select(['debt_accounts.id', 'debt_accounts.current_balance', 'debt_accounts.parent_id'])) as DebtAccountRow[]);
  const childrenOf = new Map<string, DebtAccountRow[]>();
  for (const child of children) childrenOf.set(child.parent_id!, [...(childrenOf.get(child.parent_id!) ?? []), child]);
  // Open disputes anywhere in these families: the hold's fact is then asked family by family.
  const disputed = new Set((await disputeRepo(trx, tenant).openOf([...new Set([...ids, ...heads, ...children.map((child) => child.id)])])).map((dispute) => dispute.debt_account_id));
  const reserved = new Map((await reservedByHead(trx, tenant, heads)).rows.map((row) => [row.head, Number(row.sum)]));

  const locked = new Map<string, LockedFamily>();
  for (const account of rows) {
    const own = account.parent_id === null ? (childrenOf.get(account.id) ?? []) : [];
    const familyIds = [account.id, ...(account.parent_id ? [account.parent_id] : []), ...own.map((child) => child.id)];
    const { heldChildren, ...fact } = familyIds.some((id) => disputed.has(id))
      ? await disputeHoldOf(trx, tenant, account, own)
      : { in_dispute: false, disputed_share: 0, heldChildren: new Set<string>() };
    const children = own.map(({ parent_id: _parent, ...child }) => ({ ...child, held: heldChildren.has(child.id) })) as LockedFamily['children'];
    locked.set(account.id, { account: { ...account, ...fact, reserved_amount: reserved.get(account.parent_id ?? account.id) ?? 0 }, children });
  }
  return locked;
}
