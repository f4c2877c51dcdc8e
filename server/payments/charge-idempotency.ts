/**
 * One charge per idempotency key, for the caller who sent the key: the charge keeps the key,
 * the scope (caller, method and path) and the request's keyed fingerprint, and a unique index
 * over the tenant, scope and key is the last word when two requests race past every other
 * check. A charge is answered again only to the same caller's same request: the same key with
 * another body is 422 `idempotency_key_reused`, and another caller's key is simply not theirs.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { isUniqueViolation } from '../db/tenant';
import { scopeText, type IdempotencyScope } from '../idempotency/request-fingerprint';
import { chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import type { ChargeOutcome } from './charge-outcome';
import { outcomeOf } from './charge-steps';

/** The unique index of (tenant, idempotency_scope, idempotency_key) on charges. */
export const CHARGE_KEY_INDEX = 'charges_idempotency_scope_key_unique';

/** The columns a charge made under a key carries. */
export function keyColumns(scope: IdempotencyScope | undefined): Pick<ChargeRow, 'idempotency_key' | 'idempotency_scope' | 'idempotency_fingerprint'> {
  if (!scope) return { idempotency_key: null, idempotency_scope: null, idempotency_fingerprint: null };
  return { idempotency_key: scope.key, idempotency_scope: scopeText(scope), idempotency_fingerprint: scope.fingerprint };
}

export function reusedKey(): ApiError {
  return new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with another request.', {
    'headers.idempotency-key': ['was already used with another request'],
  });
}

/**
 * The charge this caller already made with this key, answered as it was the first time (a
 * declined one as its 400 again); undefined when there is none. Throws 422 when the key made a
 * charge for another request of the same caller. A charge made before fingerprints were kept
 * (NULL) is answered to its own caller, as it was before.
 */
export async function earlierCharge(db: Knex, tenant: Tenant, scope: IdempotencyScope, waitMs = 0): Promise<ChargeOutcome | undefined> {
  const charge = await chargeRepo(db, tenant).findByIdempotencyKey(scopeText(scope), scope.key);
  return charge && answerEarlier(db, tenant, scope, charge, waitMs);
}

/** What the key's earlier `charge` answers this caller's request (as earlierCharge says). */
export async function answerEarlier(db: Knex, tenant: Tenant, scope: IdempotencyScope, charge: ChargeRow, waitMs = 0): Promise<ChargeOutcome> {
  const find = () => chargeRepo(db, tenant).findByIdempotencyKey(scopeText(scope), scope.key);
  // Being made by the first request: its outcome is waited for (as long as that request itself
  // waits for the gateway), holding no connection in between.
  for (const deadline = Date.now() + waitMs; charge.status === 'processing' && Date.now() < deadline; ) {
    await new Promise((done) => setTimeout(done, 50));
    charge = (await find())!;
  }
  if (charge.idempotency_fingerprint !== null && charge.idempotency_fingerprint !== scope.fingerprint) throw reusedKey();
  // Reserved and not finished yet (the gateway is being asked, or recovery will): its one outcome comes later.
  if (charge.status === 'processing') throw keyInUse();
  return outcomeOf(charge);
}

/**
 * A request that lost the race for its key to a request of the same caller: the winner's
 * charge when it is this request's (once it is made, waiting up to `waitMs`), 422 when it is
 * another request's, 409 while it cannot be seen yet or is still being made.
 */
export async function chargeOfRace(db: Knex, tenant: Tenant, scope: IdempotencyScope | undefined, error: unknown, waitMs = 0): Promise<ChargeOutcome> {
  if (!scope || !isUniqueViolation(error, CHARGE_KEY_INDEX)) throw error;
  const earlier = await earlierCharge(db, tenant, scope, waitMs);
  if (earlier) return earlier;
  throw keyInUse();
}

const keyInUse = () => new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry later.');
