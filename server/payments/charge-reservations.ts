/**
 * Step 1 of the API's charges in batches (group commit): the reservations of concurrent
 * `POST /charges` that are asked while a batch is being made go together in the next, in one
 * short transaction: their account families locked at once in one fixed order (family-locks.ts,
 * the order the due work and a single charge take them in), then each charge checked against its
 * terms and stored `processing`, in the order asked. A rule that refuses one charge (an ApiError)
 * answers that request alone and the others go on; anything else (a unique key taken by a
 * racing request, a deadlock) rolls the batch back and each is reserved again alone
 * (kernel/batcher.ts), so one bad request fails only itself.
 *
 * A batch costs a fixed number of statements, not a few per charge: what its charges need read
 * (their keys' earlier charges, their saved methods) is read for all at once once the families are
 * locked, and the charges are stored together in one insert at its end.
 *
 * What a family has reserved is read when it is locked. A second charge of one family in the
 * same batch must count the first one's reservation: the reservations planned so far are stored
 * first, then it locks and reads its family again (lockAccount, on the same transaction, which
 * sees the first one's row), so two payments at once still never take more than the balance.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { batcher, type Batcher } from '../kernel/batcher';
import { familyKey, lockFamilies } from './family-locks';
import type { LockedFamily } from './balances';
import type { PaymentDeps } from './payment-deps';
import { moneyWrites } from './write-slots';

/** One charge to reserve: its tenant and account id, and what the caller needs to reserve it. */
export interface ToReserve {
  tenant: Tenant;
  accountId: string;
}

/** How the caller reserves the charges of a batch, on the batch's transaction `trx`. */
export interface Reserving<I extends ToReserve, Read, Plan extends { head: string }, R> {
  /** What the items need read, for all of them at once, once their families are locked. */
  read(trx: Knex.Transaction, items: I[]): Promise<Read>;
  /**
   * Checks `item` against its terms, with its family as locked by the batch, or undefined (then
   * it locks and reads its own): answers the reservation to store (its family's head with it),
   * or what answers the item without storing anything. Throws the ApiError of a rule that refuses it.
   */
  check(trx: Knex.Transaction, item: I, family: LockedFamily | undefined, read: Read): Promise<{ store: Plan } | { answer: R }>;
  /** Stores the planned reservations at once; answers each one's result in order. */
  store(trx: Knex.Transaction, plans: Plan[]): Promise<R[]>;
}

/** Reservations made together per process at once; each holds a write slot while it commits. */
const RESERVATION_BATCHES = 2;

/** Reserves `items` in one transaction, in order; answers each one's result or the ApiError that refused it. */
export async function reserveTogether<I extends ToReserve, Read, Plan extends { head: string }, R>(
  deps: Pick<PaymentDeps, 'db'>,
  items: I[],
  reserving: Reserving<I, Read, Plan, R>,
): Promise<(R | ApiError)[]> {
  return moneyWrites(deps.db, () =>
    deps.db.transaction(async (trx) => {
      const families = await lockFamilies(
        trx,
        items.map((item) => ({ tenant: item.tenant, accountId: item.accountId })),
      );
      const read = await reserving.read(trx, items);
      const heads = new Set<string>();
      const results: (R | ApiError)[] = new Array(items.length);
      let planned: { index: number; plan: Plan }[] = [];
      const storePlanned = async () => {
        if (planned.length === 0) return;
        const stored = await reserving.store(trx, planned.map((each) => each.plan));
        planned.forEach((each, index) => (results[each.index] = stored[index]!));
        planned = [];
      };
      for (const [index, item] of items.entries()) {
        const family = families.get(item.accountId);
        const head = family && familyKey(item.tenant, family.account.parent_id ?? family.account.id);
        // A family an earlier item may have reserved on: what is planned is stored, then the
        // family read again (its reservation counts).
        const fresh = head && !heads.has(head) ? family : undefined;
        if (!fresh) await storePlanned();
        try {
          const checked = await reserving.check(trx, item, fresh, read);
          if ('answer' in checked) {
            results[index] = checked.answer;
            continue;
          }
          heads.add(familyKey(item.tenant, checked.store.head));
          planned.push({ index, plan: checked.store });
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          if (head) heads.add(head);
          results[index] = error;
        }
      }
      await storePlanned();
      return results;
    }),
  );
}


const batchers = new WeakMap<object, Batcher<ToReserve, unknown>>();

/**
 * Reserves `item` with the others asked at the same time (one batcher per app's dependencies);
 * answers its result, or throws what refused it.
 */
export function reserveInBatch<I extends ToReserve, Read, Plan extends { head: string }, R>(deps: Pick<PaymentDeps, 'db'>, item: I, reserving: Reserving<I, Read, Plan, R>): Promise<R> {
  let reservations = batchers.get(deps) as Batcher<I, R> | undefined;
  if (!reservations) {
    reservations = batcher<I, R>((items) => reserveTogether(deps, items, reserving), { parallel: RESERVATION_BATCHES });
    batchers.set(deps, reservations as Batcher<ToReserve, unknown>);
  }
  return reservations.add(item);
}
