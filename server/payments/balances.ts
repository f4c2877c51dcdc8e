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
  /**
   * The account's children, oldest first (empty for a child or a stand-alone account); `held` by
   * an open dispute; `reserved`: the cents that `processing` charges made on the child itself hold.
   */
  children: (DebtAccountRow & { held?: boolean; reserved?: number })[];
}

export interface LockedFamily extends Family {
  /** With the dispute hold's fact and `reserved_amount` (what the family's `processing` charges hold), for the payment terms. */
  account: DebtAccountRow & { in_dispute?: boolean; disputed_share?: number; reserved_amount: number };
}

/** Which account: by `{id|external_id}`, or the one the charge `chargeId` is made on. */
export type AccountKey = string | { chargeId: string };

/**
 * THE order every writer locks account families in (one family or a batch of them): the heads
 * (a parent, or an account without one) first, by id; then the children, by parent, oldest
 * first. Two writers of one family queue at its head; two batches take their heads in one order.
 */
const FAMILY_LOCK_ORDER = `${DEBT_ACCOUNTS}.parent_id IS NOT NULL, coalesce(${DEBT_ACCOUNTS}.parent_id, ${DEBT_ACCOUNTS}.id), ${DEBT_ACCOUNTS}.created_at, ${DEBT_ACCOUNTS}.id`;

/** The query (columns `id`, `parent_id`, read unlocked) of the account `key`; a UUID key is an id first, then an external_id (as debtAccountRepo.find). */
function foundBy(trx: Knex.Transaction, tenant: Tenant, key: AccountKey): Knex.QueryBuilder {
  if (typeof key !== 'string') {
    return scoped(trx, DEBT_ACCOUNTS, tenant)
      .join(CHARGES, `${CHARGES}.debt_account_id`, `${DEBT_ACCOUNTS}.id`)
      .where(`${CHARGES}.id`, key.chargeId)
      .select(`${DEBT_ACCOUNTS}.id`, `${DEBT_ACCOUNTS}.parent_id`);
  }
  const byId = UUID.test(key);
  return scoped(trx, DEBT_ACCOUNTS, tenant)
    .where((where) => (byId ? where.where({ id: key }).orWhere({ external_id: key }) : where.where({ external_id: key })))
    .orderByRaw(byId ? '(id = ?) DESC' : '1', byId ? [key] : [])
    .limit(1)
    .select('id', 'parent_id');
}

/**
 * The families of the accounts `found` selects (columns `id`, `parent_id`, read unlocked),
 * locked in ONE statement in FAMILY_LOCK_ORDER: each one's head, itself, and, for a head, its
 * children. Answers the rows in lock order and the ids of the accounts asked for.
 */
export async function lockFamilyRows(trx: Knex.Transaction, tenant: Tenant, found: Knex.QueryBuilder): Promise<{ rows: DebtAccountRow[]; asked: Set<string> }> {
  const locked = (await debtAccountRepo(trx, tenant)
    .query()
    .with('found', found)
    // One IN list (heads, the accounts, the heads' children by the parent_id index), so the
    // planner joins by id instead of filtering every account of the tenant.
    .whereRaw(
      `${DEBT_ACCOUNTS}.id IN (SELECT coalesce(parent_id, id) FROM found UNION ALL SELECT id FROM found
         UNION ALL SELECT child.id FROM ${DEBT_ACCOUNTS} child WHERE child.parent_id IN (SELECT id FROM found))`,
    )
    .orderByRaw(FAMILY_LOCK_ORDER)
    .forUpdate(DEBT_ACCOUNTS)
    .select([...DEBT_ACCOUNT_COLUMNS, trx.raw(`${DEBT_ACCOUNTS}.id IN (SELECT id FROM found) AS asked`)])) as (DebtAccountRow & { asked: boolean })[];
  return { rows: locked.map(({ asked: _asked, ...row }) => row), asked: new Set(locked.filter((row) => row.asked).map((row) => row.id)) };
}

/**
 * The families of `asked` among the locked `rows` (lockFamilyRows), by asked account id. A charge
 * on a parent takes from its children; one on a child takes from that child only. Children held
 * by an open dispute are marked; `terms`: the account also gets the facts the payment terms read
 * (the dispute hold's fact, and `reserved_amount`, what the family's `processing` charges hold).
 * One statement reads the reservations and open disputes of all the families (none when neither
 * is needed); the hold is then asked only of a family with an open dispute.
 */
export async function familiesOf(trx: Knex.Transaction, tenant: Tenant, rows: DebtAccountRow[], asked: Iterable<string>, terms: boolean): Promise<Map<string, LockedFamily>> {
  const byId = new Map(rows.map((row) => [row.id, row]));
  const wanted = [...asked].map((id) => byId.get(id)).filter((row): row is DebtAccountRow => row !== undefined);
  const childrenOf = (account: DebtAccountRow) => (account.parent_id === null ? rows.filter((row) => row.parent_id === account.id) : []);
  const needed = terms || wanted.some((account) => childrenOf(account).length > 0);
  const { reserved, disputed, onChildren } = needed
    ? await familyFacts(
        trx,
        tenant,
        terms ? [...new Set(wanted.map((account) => account.parent_id ?? account.id))] : [],
        rows.map((row) => row.id),
        wanted.flatMap((account) => childrenOf(account).map((child) => child.id)),
      )
    : { reserved: new Map<string, number>(), disputed: new Set<string>(), onChildren: new Map<string, number>() };
  const families = new Map<string, LockedFamily>();
  for (const account of wanted) {
    const children = childrenOf(account);
    const familyIds = [account.id, ...(account.parent_id ? [account.parent_id] : []), ...children.map((child) => child.id)];
    const { heldChildren, ...fact } = familyIds.some((id) => disputed.has(id))
      ? await disputeHoldOf(trx, tenant, account, children)
      : { in_dispute: false, disputed_share: 0, heldChildren: new Set<string>() };
    families.set(account.id, {
      account: terms ? { ...account, ...fact, reserved_amount: reserved.get(account.parent_id ?? account.id) ?? 0 } : { ...account, reserved_amount: 0 },
      children: children.map((child) => ({ ...child, held: heldChildren.has(child.id), reserved: onChildren.get(child.id) ?? 0 })),
    });
  }
  return families;
}

/** The account `key` and its children, all locked, with the facts the payment terms read; undefined when it does not exist. */
export async function lockAccount(trx: Knex.Transaction, tenant: Tenant, key: AccountKey): Promise<LockedFamily | undefined> {
  const { rows, asked } = await lockFamilyRows(trx, tenant, foundBy(trx, tenant, key));
  return [...(await familiesOf(trx, tenant, rows, asked, true)).values()][0];
}

/**
 * Per family head of `heads`: the cents held by the `processing` charges of the family (on the
 * head or any child: a reservation on a parent may land on any child, so every account of the
 * family counts them all), as rows `{head, sum}`; a head with none has no row. The one rule of
 * what a family has reserved.
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
 * Read once the families are locked (so none is added meanwhile), in one statement: what each
 * family under `heads` has reserved (reservedByHead), which of `locked` an open dispute names
 * (then dispute-hold-fact.ts decides what it holds), and what the `processing` charges made on
 * each of `children` themselves hold (spread leaves it to them).
 */
async function familyFacts(
  trx: Knex.Transaction,
  tenant: Tenant,
  heads: string[],
  locked: string[],
  children: string[],
): Promise<{ reserved: Map<string, number>; disputed: Set<string>; onChildren: Map<string, number> }> {
  const disputed = scoped(trx, DISPUTES, tenant).whereIn('debt_account_id', locked).whereIn('status', OPEN_STATUSES).select('debt_account_id');
  const onChildren = scoped(trx, CHARGES, tenant).whereIn('debt_account_id', children).where({ status: 'processing' }).groupBy('debt_account_id').select('debt_account_id', trx.raw('sum(amount) AS sum'));
  const { rows } = await trx.raw<{ rows: { kind: 'reserved' | 'disputed' | 'child'; id: string; sum: string | null }[] }>(
    `SELECT 'reserved' AS kind, head AS id, sum FROM (?) reserved
     UNION ALL SELECT DISTINCT 'disputed', debt_account_id, NULL::numeric FROM (?) disputed
     UNION ALL SELECT 'child', debt_account_id, sum FROM (?) children`,
    [reservedByHead(trx, tenant, heads), disputed, onChildren],
  );
  const sums = (kind: 'reserved' | 'child') => new Map(rows.filter((row) => row.kind === kind).map((row) => [row.id, Number(row.sum ?? 0)]));
  return { reserved: sums('reserved'), disputed: new Set(rows.filter((row) => row.kind === 'disputed').map((row) => row.id)), onChildren: sums('child') };
}

/**
 * How a payment of `amount` on the family's account lands: on the account itself when it has no
 * children; on a parent, oldest child first, each up to its own current balance, never on a child
 * an open dispute holds. What a `processing` charge made on a child itself holds is left to that
 * charge: a charge on the parent and one on its child reserved at the same time (the terms let
 * both, the family's balance covering both) must not both take the child's balance, or the child
 * would fall below 0 when the second is recorded. Only money recorded from outside (reserving
 * nothing beforehand) can find the unheld balances too small; it then takes the held parts too,
 * oldest child first.
 */
export function spread({ account, children }: Family, amount: number): { debt_account_id: string; amount: number }[] {
  if (children.length === 0) return [{ debt_account_id: account.id, amount }];
  const open = children.filter((one) => !one.held);
  const taken = new Map<string, number>();
  let left = amount;
  const take = (roomOf: (child: Family['children'][number]) => number) => {
    for (const child of open) {
      if (left === 0) return;
      const part = Math.min(left, Math.max(roomOf(child) - (taken.get(child.id) ?? 0), 0));
      if (part > 0) taken.set(child.id, (taken.get(child.id) ?? 0) + part);
      left -= part;
    }
  };
  take((child) => Number(child.current_balance) - (child.reserved ?? 0));
  take((child) => Number(child.current_balance));
  return open.filter((child) => taken.has(child.id)).map((child) => ({ debt_account_id: child.id, amount: taken.get(child.id)! }));
}

/**
 * Moves each account's current_balance by `delta` (negative: paid), flipping paid_off/active
 * at 0, all accounts in ONE statement (an account named twice moves by the sum); then re-sums
 * and re-flags their parents in one more (none when no account has a parent). The caller holds
 * the locks. Answers the accounts whose balance moved, in the order first named, parents after.
 */
export async function moveBalances(trx: Knex.Transaction, tenant: Tenant, deltas: { debt_account_id: string; delta: number }[]): Promise<string[]> {
  const summed = new Map<string, number>();
  for (const { debt_account_id, delta } of deltas) summed.set(debt_account_id, (summed.get(debt_account_id) ?? 0) + delta);
  if (summed.size === 0) return [];
  const { rows: moved } = await trx.raw<{ rows: { parent_id: string | null }[] }>(
    `UPDATE ${DEBT_ACCOUNTS} a
        SET current_balance = a.current_balance + v.delta,
            -- Active at 0 becomes paid_off, paid_off above 0 becomes active again (as the parents below).
            status = (CASE WHEN a.status = 'active' AND a.current_balance + v.delta = 0 THEN 'paid_off'
                           WHEN a.status = 'paid_off' AND a.current_balance + v.delta > 0 THEN 'active'
                           ELSE a.status::text END)::debt_account_status,
            updated_at = now()
       FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::bigint[]) AS delta) v
      WHERE a.id = ANY(?::uuid[]) AND a.id = v.id AND a.organization_id = ? AND a.environment = ?
      RETURNING a.parent_id`,
    // The ids twice: the second as an index condition (joined with the unnest alone, the accounts could be scanned whole).
    [[...summed.keys()], [...summed.values()], [...summed.keys()], tenant.organizationId, tenant.environment],
  );
  const parents = [...new Set(moved.flatMap(({ parent_id }) => (parent_id ? [parent_id] : [])))];
  if (parents.length > 0) await resumParents(trx, tenant, parents);
  return [...new Set([...summed.keys(), ...parents])];
}

/** Each parent's balances re-summed from its children and re-flagged (paid_off at 0, active above), in one statement. */
async function resumParents(trx: Knex.Transaction, tenant: Tenant, parents: string[]): Promise<void> {
  await trx.raw(
    `UPDATE ${DEBT_ACCOUNTS} parent
        SET balance = sums.balance, current_balance = sums.current_balance,
            status = (CASE WHEN parent.status = 'active' AND sums.current_balance = 0 THEN 'paid_off'
                           WHEN parent.status = 'paid_off' AND sums.current_balance > 0 THEN 'active'
                           ELSE parent.status::text END)::debt_account_status,
            updated_at = now()
       FROM (SELECT parent_id, coalesce(sum(balance), 0) AS balance, coalesce(sum(current_balance), 0) AS current_balance
               FROM ${DEBT_ACCOUNTS} WHERE parent_id = ANY(?::uuid[]) GROUP BY parent_id) sums
      WHERE parent.id = sums.parent_id AND parent.organization_id = ? AND parent.environment = ?`,
    [parents, tenant.organizationId, tenant.environment],
  );
}
