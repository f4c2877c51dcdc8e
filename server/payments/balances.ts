/**
 * Balances moved by money: an account's current_balance goes down by what a charge takes and
 * up by what a void, refund or return gives back; a parent is re-summed from its children;
 * `paid_off` at 0 and `active` again above it. Locks go parent first, then children (oldest
 * first), the order every writer of a family uses, so two charges on one family queue instead
 * of deadlocking, and never together take more than the balance.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { scoped } from '../db/tenant';
import { disputeHoldOf } from '../disputes/dispute-hold-fact';
import { CHARGES } from '../charge-store/charge-repo';

export interface LockedFamily {
  /** With the dispute hold's fact and `reserved_amount` (what the family's `processing` charges hold), for the payment terms. */
  account: DebtAccountRow & { in_dispute?: boolean; disputed_share?: number; reserved_amount: number };
  /** The account's children, oldest first (empty for a child or a stand-alone account); `held` by an open dispute. */
  children: (DebtAccountRow & { held?: boolean })[];
}

/** The account by `{id|external_id}` and its children, all locked; undefined when it does not exist. */
export async function lockAccount(trx: Knex.Transaction, tenant: Tenant, key: string): Promise<LockedFamily | undefined> {
  const accounts = debtAccountRepo(trx, tenant);
  const found = await accounts.find(key);
  if (!found) return undefined;
  const top = found.parent_id ?? found.id;
  // A child's parent is locked first; an account without a parent is locked by the read below.
  if (found.parent_id !== null) await accounts.lockParents([top]);
  const account = (await accounts.find(found.id, { forUpdate: true }))!;
  // A charge on a parent takes from its children; one on a child takes from that child only.
  const children =
    account.parent_id === null
      ? ((await accounts
          .query()
          .where(`${DEBT_ACCOUNTS}.parent_id`, account.id)
          .orderBy([
            { column: `${DEBT_ACCOUNTS}.created_at`, order: 'asc' },
            { column: `${DEBT_ACCOUNTS}.id`, order: 'asc' },
          ])
          .forUpdate(DEBT_ACCOUNTS)
          .select(['debt_accounts.id', 'debt_accounts.current_balance'])) as DebtAccountRow[])
      : [];
  const { heldChildren, ...fact } = await disputeHoldOf(trx, tenant, account, children);
  return { account: { ...account, ...fact, reserved_amount: await reservedOnFamily(trx, tenant, top) }, children: children.map((child) => ({ ...child, held: heldChildren.has(child.id) })) };
}

/**
 * Cents held by the `processing` charges of the family under `top` (on it or any child): a
 * reservation on a parent may land on any child, so every account of the family counts them
 * all. The caller holds the family's lock, so none is added meanwhile.
 */
async function reservedOnFamily(trx: Knex.Transaction, tenant: Tenant, top: string): Promise<number> {
  const row = await scoped(trx, CHARGES, tenant)
    .where({ status: 'processing' })
    .whereIn('debt_account_id', scoped(trx, DEBT_ACCOUNTS, tenant).where({ parent_id: top }).select('id').union(trx.raw('SELECT ?::uuid', [top])))
    .sum<{ sum: string | null }>('amount as sum')
    .first();
  return Number(row?.sum ?? 0);
}

/** Oldest child first, each up to its own current balance; an account without children takes it all. */
export function spread({ account, children }: LockedFamily, amount: number): { debt_account_id: string; amount: number }[] {
  if (children.length === 0) return [{ debt_account_id: account.id, amount }];
  const parts = [];
  let left = amount;
  for (const child of children.filter((one) => !one.held)) {
    const part = Math.min(left, Number(child.current_balance));
    if (part > 0) parts.push({ debt_account_id: child.id, amount: part });
    left -= part;
    if (left === 0) break;
  }
  return parts;
}

/**
 * Moves each account's current_balance by `delta` (negative: paid), flips paid_off/active at
 * 0, then re-sums and re-flags the parents. The caller holds the locks. Answers the accounts whose
 * balance moved, parents included.
 */
export async function moveBalances(trx: Knex.Transaction, tenant: Tenant, deltas: { debt_account_id: string; delta: number }[]): Promise<string[]> {
  const ids = deltas.map((d) => d.debt_account_id);
  const parentIds = new Set<string>();
  for (const { debt_account_id, delta } of deltas) {
    const moved: { parent_id: string | null }[] = await scoped(trx, DEBT_ACCOUNTS, tenant)
      .where({ id: debt_account_id })
      .update({ current_balance: trx.raw('current_balance + ?', [delta]), updated_at: trx.fn.now() })
      .returning('parent_id');
    for (const { parent_id } of moved) if (parent_id) parentIds.add(parent_id);
  }
  const parents = [...parentIds];
  const accounts = debtAccountRepo(trx, tenant);
  for (const parentId of parents) await accounts.recalculate(parentId);
  await flagPaidOff(trx, tenant, [...ids, ...parents]);
  return [...new Set([...ids, ...parents])];
}

async function flagPaidOff(trx: Knex.Transaction, tenant: Tenant, ids: string[]): Promise<void> {
  // One statement: active at 0 becomes paid_off, paid_off above 0 becomes active again.
  await scoped(trx, DEBT_ACCOUNTS, tenant)
    .whereIn('id', ids)
    .where((flip) => flip.where({ status: 'active', current_balance: 0 }).orWhere((back) => back.where('status', 'paid_off').where('current_balance', '>', 0)))
    .update({ status: trx.raw(`(CASE WHEN current_balance = 0 THEN 'paid_off' ELSE 'active' END)::debt_account_status`), updated_at: trx.fn.now() });
}
