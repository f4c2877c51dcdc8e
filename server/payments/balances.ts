/**
 * Balances moved by money: an account's current_balance goes down by what a charge takes and
 * up by what a void, refund or return gives back; a parent is re-summed from its children;
 * `paid_off` at 0 and `active` again above it. Locks go parent first, then children (oldest
 * first), the order every writer of a family uses, so two charges on one family queue instead
 * of deadlocking, and never together take more than the balance.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { DEBT_ACCOUNT_COLUMNS, DEBT_ACCOUNTS, debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { scoped, UUID } from '../db/tenant';
import { DISPUTES, OPEN_STATUSES } from '../dispute-store/dispute-repo';
import { disputeHoldOf } from '../disputes/dispute-hold-fact';
import { CHARGES } from '../charge-store/charge-repo';

/** An account and its children, locked: what recording a charge's answer needs (spread). */
export interface Family {
  account: DebtAccountRow;
  /** The account's children, oldest first (empty for a child or a stand-alone account); `held` by an open dispute. */
  children: (DebtAccountRow & { held?: boolean })[];
}

export interface LockedFamily extends Family {
  /** With the dispute hold's fact and `reserved_amount` (what the family's `processing` charges hold), for the payment terms. */
  account: DebtAccountRow & { in_dispute?: boolean; disputed_share?: number; reserved_amount: number };
}

/** Which account: by `{id|external_id}`, or the one the charge `chargeId` is made on. */
export type AccountKey = string | { chargeId: string };

/**
 * The account `key` and its family, locked in one statement, in the family's order: the parent
 * first (the account itself when it has none), then the account, or the account's children
 * oldest first. A UUID key is an id first, then an external_id (as debtAccountRepo.find).
 * Answers the rows in that order and the account asked for; nothing when it does not exist.
 */
async function lockRows(trx: Knex.Transaction, tenant: Tenant, key: AccountKey): Promise<{ account: DebtAccountRow | undefined; rows: DebtAccountRow[] }> {
  let found: Knex.QueryBuilder;
  if (typeof key === 'string') {
    const byId = UUID.test(key);
    found = scoped(trx, DEBT_ACCOUNTS, tenant)
      .where((where) => (byId ? where.where({ id: key }).orWhere({ external_id: key }) : where.where({ external_id: key })))
      .orderByRaw(byId ? '(id = ?) DESC' : '1', byId ? [key] : [])
      .limit(1)
      .select('id', 'parent_id');
  } else {
    found = scoped(trx, DEBT_ACCOUNTS, tenant)
      .join(CHARGES, `${CHARGES}.debt_account_id`, `${DEBT_ACCOUNTS}.id`)
      .where(`${CHARGES}.id`, key.chargeId)
      .select(`${DEBT_ACCOUNTS}.id`, `${DEBT_ACCOUNTS}.parent_id`);
  }
  const locked = (await debtAccountRepo(trx, tenant)
    .query()
    .with('found', found)
    .where((where) =>
      where
        .whereRaw(`${DEBT_ACCOUNTS}.id IN (SELECT coalesce(parent_id, id) FROM found UNION ALL SELECT id FROM found)`)
        .orWhereRaw(`${DEBT_ACCOUNTS}.parent_id = (SELECT id FROM found)`),
    )
    .orderByRaw(`${DEBT_ACCOUNTS}.parent_id IS NOT NULL, ${DEBT_ACCOUNTS}.created_at, ${DEBT_ACCOUNTS}.id`)
    .forUpdate(DEBT_ACCOUNTS)
    .select([...DEBT_ACCOUNT_COLUMNS, trx.raw(`${DEBT_ACCOUNTS}.id = (SELECT id FROM found) AS asked`)])) as (DebtAccountRow & { asked: boolean })[];
  const rows = locked.map(({ asked: _asked, ...row }) => row);
  return { account: rows[locked.findIndex((row) => row.asked)], rows };
}

/**
 * The account `key` and its children, all locked, without the terms' facts: enough to record a
 * charge's answer (children held by a dispute are read only when there are children).
 * Undefined when it does not exist.
 */
export async function lockFamily(trx: Knex.Transaction, tenant: Tenant, key: AccountKey): Promise<Family | undefined> {
  const { account, rows } = await lockRows(trx, tenant, key);
  if (!account) return undefined;
  // A charge on a parent takes from its children; one on a child takes from that child only.
  const children = account.parent_id === null ? rows.filter((row) => row.parent_id === account.id) : [];
  if (children.length === 0) return { account, children };
  const { heldChildren } = await disputeHoldOf(trx, tenant, account, children);
  return { account, children: children.map((child) => ({ ...child, held: heldChildren.has(child.id) })) };
}

/** The account `key` and its children, all locked, with the facts the payment terms read; undefined when it does not exist. */
export async function lockAccount(trx: Knex.Transaction, tenant: Tenant, key: AccountKey): Promise<LockedFamily | undefined> {
  const { account, rows } = await lockRows(trx, tenant, key);
  if (!account) return undefined;
  const children = account.parent_id === null ? rows.filter((row) => row.parent_id === account.id) : [];
  const { reserved, disputed } = await familyFacts(trx, tenant, account.parent_id ?? account.id, rows.map((row) => row.id));
  const { heldChildren, ...fact } = disputed ? await disputeHoldOf(trx, tenant, account, children) : { in_dispute: false, disputed_share: 0, heldChildren: new Set<string>() };
  return { account: { ...account, ...fact, reserved_amount: reserved }, children: children.map((child) => ({ ...child, held: heldChildren.has(child.id) })) };
}

/**
 * Per family head of `heads`: the cents held by the `processing` charges of the family (on the
 * head or any child: a reservation on a parent may land on any child, so every account of the
 * family counts them all), as rows `{head, sum}`; a head with none has no row. The one rule of
 * what a family has reserved, for one family (lockAccount) or a batch (family-locks.ts).
 */
export function reservedByHead(trx: Knex, tenant: Tenant, heads: string[]): Knex.Raw<{ rows: { head: string; sum: string }[] }> {
  return trx.raw(
    `SELECT coalesce(a.parent_id, a.id) AS head, sum(c.amount) AS sum
       FROM ${CHARGES} c JOIN ${DEBT_ACCOUNTS} a ON a.id = c.debt_account_id
      WHERE c.organization_id = :org AND c.environment = :env AND c.status = 'processing'
        AND c.debt_account_id IN (SELECT id FROM ${DEBT_ACCOUNTS} WHERE organization_id = :org AND environment = :env AND (id = ANY(:heads::uuid[]) OR parent_id = ANY(:heads::uuid[])))
      GROUP BY 1`,
    { org: tenant.organizationId, env: tenant.environment, heads },
  );
}

/**
 * Read once the family is locked (so none is added meanwhile), in one statement: what the
 * family under `top` has reserved (reservedByHead), and whether an open dispute names one of
 * `locked` (then dispute-hold-fact.ts decides what it holds).
 */
async function familyFacts(trx: Knex.Transaction, tenant: Tenant, top: string, locked: string[]): Promise<{ reserved: number; disputed: boolean }> {
  const disputed = scoped(trx, DISPUTES, tenant).whereIn('debt_account_id', locked).whereIn('status', OPEN_STATUSES).select(trx.raw('1'));
  const { rows } = await trx.raw<{ rows: { reserved: string | null; disputed: boolean }[] }>('SELECT (SELECT sum FROM (?) reserved) AS reserved, EXISTS (?) AS disputed', [
    reservedByHead(trx, tenant, [top]),
    disputed,
  ]);
  return { reserved: Number(rows[0]?.reserved ?? 0), disputed: rows[0]?.disputed ?? false };
}

/** Oldest child first, each up to its own current balance; an account without children takes it all. */
export function spread({ account, children }: Family, amount: number): { debt_account_id: string; amount: number }[] {
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
 * Moves each account's current_balance by `delta` (negative: paid), flipping paid_off/active
 * at 0 in the same statement, then re-sums and re-flags the parents. The caller holds the
 * locks. Answers the accounts whose balance moved, parents included.
 */
export async function moveBalances(trx: Knex.Transaction, tenant: Tenant, deltas: { debt_account_id: string; delta: number }[]): Promise<string[]> {
  const ids = deltas.map((d) => d.debt_account_id);
  const parentIds = new Set<string>();
  for (const { debt_account_id, delta } of deltas) {
    const moved: { parent_id: string | null }[] = await scoped(trx, DEBT_ACCOUNTS, tenant)
      .where({ id: debt_account_id })
      .update({
        current_balance: trx.raw('current_balance + ?', [delta]),
        // Active at 0 becomes paid_off, paid_off above 0 becomes active again (as flagPaidOff).
        status: trx.raw(
          `(CASE WHEN status = 'active' AND current_balance + ? = 0 THEN 'paid_off' WHEN status = 'paid_off' AND current_balance + ? > 0 THEN 'active' ELSE status::text END)::debt_account_status`,
          [delta, delta],
        ),
        updated_at: trx.fn.now(),
      })
      .returning('parent_id');
    for (const { parent_id } of moved) if (parent_id) parentIds.add(parent_id);
  }
  const parents = [...parentIds];
  const accounts = debtAccountRepo(trx, tenant);
  for (const parentId of parents) await accounts.recalculate(parentId);
  if (parents.length > 0) await flagPaidOff(trx, tenant, parents);
  return [...new Set([...ids, ...parents])];
}

async function flagPaidOff(trx: Knex.Transaction, tenant: Tenant, ids: string[]): Promise<void> {
  // One statement: active at 0 becomes paid_off, paid_off above 0 becomes active again.
  await scoped(trx, DEBT_ACCOUNTS, tenant)
    .whereIn('id', ids)
    .where((flip) => flip.where({ status: 'active', current_balance: 0 }).orWhere((back) => back.where('status', 'paid_off').where('current_balance', '>', 0)))
    .update({ status: trx.raw(`(CASE WHEN current_balance = 0 THEN 'paid_off' ELSE 'active' END)::debt_account_status`), updated_at: trx.fn.now() });
}
