/**
 * Step 1 of many instalments' charges at once (the due work's batches), on the plan runner's
 * transaction, which holds their families' locks: each checked as `reserveOn` checks it (one
 * path: create-charge.ts `plan`), their customers' saved methods read in one statement per
 * tenant, and the charges stored in one insert per tenant at the end.
 *
 * What a family has reserved was read when the runner locked it, before the batch. Two charges
 * of one family in a batch (a plan on a parent and one on a child moved under it) must not both
 * be checked against that one figure, or together they could take more than the family owes:
 * each is checked counting what the batch's earlier charges of its family (by head) reserve,
 * as they will count once stored.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { paymentMethodRepo, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { chargeRepo, type ChargeRow, type ChargeValues } from '../charge-store/charge-repo';
import type { PaymentGateway } from '../gateway/gateway';
import type { LockedFamily } from './balances';
import type { PaymentDeps } from './payment-deps';
import { familyKey, tenantKey } from './family-locks';
import { todayUtc } from '../dates';
import { intentErrors, throwIfAny } from '../payment-terms/payment-intent';
import { intentOf, plan, type Origin, type Prepared } from './create-charge';

type ChargeCreate = components['schemas']['ChargeCreate'];

/** One instalment's charge to reserve in a batch (`reserveAllOn`): what `reserveOn` takes, and its tenant's time. */
export interface ToReserveOn {
  tenant: Tenant;
  gateway: PaymentGateway;
  body: ChargeCreate;
  origin: Origin;
  family?: LockedFamily;
  /** The tenant's time (the sandbox clock in a sandbox). */
  now: Date;
}

type Reserved = { charge: ChargeRow; token: string; head: string };

/**
 * Reserves the charges of `requests` on `trx` (see above). Answers each one's reservation, or
 * the ApiError of the rule that refused it (an expired card; more than its family can still be
 * paid once the batch's earlier charges count), in order.
 */
export async function reserveAllOn(deps: PaymentDeps, trx: Knex.Transaction, requests: ToReserveOn[]): Promise<(Reserved | ApiError)[]> {
  const tenants = new Map<string, { tenant: Tenant; customers: Set<string>; methods: Map<string, PaymentMethodRow> }>();
  for (const { tenant, family } of requests) {
    const key = tenantKey(tenant);
    const entry = tenants.get(key) ?? tenants.set(key, { tenant, customers: new Set(), methods: new Map() }).get(key)!;
    if (family) entry.customers.add(family.account.customer_id);
  }
  for (const { tenant, customers, methods } of tenants.values()) {
    for (const method of await paymentMethodRepo(trx, tenant).forCustomers([...customers])) methods.set(method.id, method);
  }
  const results: (Reserved | ApiError | undefined)[] = [];
  const toStore: { index: number; tenant: Tenant; values: ChargeValues; token: string; head: string }[] = [];
  // The cents the batch's charges planned so far reserve, by family (familyKey).
  const planned = new Map<string, number>();
  for (const { tenant, gateway, body, origin, family, now } of requests) {
    const intent = intentOf(body, origin, {});
    // Only the family's own customer's methods were read: any other request reads its own.
    const methods = family?.account.id === body.debt_account_id ? tenants.get(tenantKey(tenant))!.methods : undefined;
    try {
      throwIfAny(intentErrors(intent, { channel: 'api', today: todayUtc(now) }));
      const pending = (head: string) => planned.get(familyKey(tenant, head)) ?? 0;
      const prepared: Prepared = { body, intent, origin, idempotency: undefined, now, later: undefined, inlineValues: undefined, inlineToken: undefined, family, methods, pending };
      const { values, token, head } = await plan(deps, trx, tenant, gateway, prepared);
      planned.set(familyKey(tenant, head), pending(head) + body.amount);
      toStore.push({ index: results.length, tenant, values, token, head });
      results.push(undefined);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push(error);
    }
  }
  for (const [key, { tenant }] of tenants) {
    const mine = toStore.filter((each) => tenantKey(each.tenant) === key);
    const stored = await chargeRepo(trx, tenant).insertMany(mine.map((each) => each.values));
    mine.forEach((each, at) => (results[each.index] = { charge: stored[at]!, token: each.token, head: each.head }));
  }
  return results as (Reserved | ApiError)[];
}
