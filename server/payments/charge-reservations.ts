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
 * What a family has reserved is read when it is locked. A second charge of one family in the
 * same batch must count the first one's reservation: it locks and reads its family again
 * (lockAccount, on the same transaction, which sees the first one's row), so two payments at
 * once still never take more than the balance.
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

/** Reserves `item` on `trx`: with its family as locked by the batch, or undefined (then it locks and reads its own). Answers the family's head. */
export type ReserveOne<I extends ToReserve, R extends { head: string }> = (trx: Knex.Transaction, item: I, family: LockedFamily | undefined) => Promise<R>;

/** Reservations made together per process at once; each holds a write slot while it commits. */
const RESERVATION_BATCHES = 2;

/** Reserves `items` in one transaction, in order; answers each one's reservation or the ApiError that refused it. */
export async function reserveTogether<I extends ToReserve, R extends { head: string }>(
  deps: Pick<PaymentDeps, 'db'>,
  items: I[],
  reserveOne: ReserveOne<I, R>,
): Promise<(R | ApiError)[]> {
  return moneyWrites(deps.db, () =>
    deps.db.transaction(async (trx) => {
      const families = await lockFamilies(
        trx,
        items.map((item) => ({ tenant: item.tenant, accountId: item.accountId })),
      );
      const heads = new Set<string>();
      const results: (R | ApiError)[] = [];
      for (const item of items) {
        const family = families.get(item.accountId);
        const head = family && familyKey(item.tenant, family.account.parent_id ?? family.account.id);
        // A family an earlier item reserved on already: read again (its reservation counts).
        const fresh = head && !heads.has(head) ? family : undefined;
        try {
          const reserved = await reserveOne(trx, item, fresh);
          heads.add(familyKey(item.tenant, reserved.head));
          results.push(reserved);
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          if (head) heads.add(head);
          results.push(error);
        }
      }
      return results;
    }),
  );
}


const batchers = new WeakMap<object, Batcher<ToReserve, unknown>>();

/**
 * Reserves `item` with the others asked at the same time (one batcher per app's dependencies
 * and `reserveOne`); answers its reservation, or throws what refused it.
 */
export function reserveInBatch<I extends ToReserve, R extends { head: string }>(deps: Pick<PaymentDeps, 'db'>, item: I, reserveOne: ReserveOne<I, R>): Promise<R> {
  let reservations = batchers.get(deps) as Batcher<I, R> | undefined;
  if (!reservations) {
    reservations = batcher<I, R>((items) => reserveTogether(deps, items, reserveOne), { parallel: RESERVATION_BATCHES });
    batchers.set(deps, reservations as Batcher<ToReserve, unknown>);
  }
  return reservations.add(item);
}
