/**
 * Charges reserved in batches. The API's (`reserving`, for charge-reservations.ts): the batch
 * reads the earlier charges of their keys and their saved methods once, checks each charge as a
 * single one is checked (charge-plan.ts), and stores them in one insert per tenant.
 *
 * The due work's (`reserveAllOn`): step 1 of many instalments' charges at once, on the plan runner's
 * transaction, which holds their families' locks: each checked as `reserveOn` checks it (one
 * path: charge-plan.ts `plan`), their customers' saved methods read in one statement per
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
import { todayUtc } from '../kernel/dates';
import { intentErrors, throwIfAny } from '../payment-terms/payment-intent';
import { intentOf, plan, type Origin, type Prepared } from './charge-plan';
import type { Reserving } from './charge-reservations';
import { groupBy } from '../kernel/collections';
import { UUID } from '../db/tenant';
import { scopeText } from '../idempotency/request-fingerprint';

type ChargeCreate = components['schemas']['ChargeCreate'];

/** One API charge of a reservation batch. */
export interface BatchItem {
  tenant: Tenant;
  accountId: string;
  gateway: PaymentGateway;
  prepared: Prepared;
}

/** A charge of a batch checked, to store: its values, and what asking the gateway needs. */
interface Planned {
  tenant: Tenant;
  values: ChargeValues;
  token: string;
  head: string;
}

/** What a batch reads for its charges: by tenant, the earlier charges of their keys (by scope and key) and their saved methods. */
type BatchRead = Map<string, { earlier: Map<string, ChargeRow>; methods: Map<string, PaymentMethodRow> }>;

/** A charge reserved: its row, and what asking the gateway needs. */
type Reserved = { charge: ChargeRow; token: string; head: string };

const keyOf = (scope: string, key: string) => `${scope}\n${key}`;

/**
 * The API's charges reserved in batches (charge-reservations.ts): the batch reads the earlier
 * charges of their keys and their saved methods (one statement each per tenant), checks each
 * charge as `reserve` does, and stores the charges in one insert per tenant. A charge whose key
 * made one already answers `{ earlier }` instead.
 */
export const reserving = (deps: PaymentDeps): Reserving<BatchItem, BatchRead, Planned, Reserved | { earlier: ChargeRow }> => ({
  async read(trx, items) {
    const read: BatchRead = new Map();
    for (const [key, ofTenant] of groupBy(items, (item) => tenantKey(item.tenant))) {
      const { tenant } = ofTenant[0]!;
      const keys = ofTenant.flatMap(({ prepared: { idempotency, inlineValues } }) => (idempotency && !inlineValues ? [{ scope: scopeText(idempotency), key: idempotency.key }] : []));
      const methodIds = [...new Set(ofTenant.flatMap(({ prepared: { body } }) => (body.payment_method_id ? [body.payment_method_id] : [])))];
      const earlier = await chargeRepo(trx, tenant).findByIdempotencyKeys(keys);
      const methods = await paymentMethodRepo(trx, tenant).findMany(methodIds.filter((id) => UUID.test(id)));
      read.set(key, {
        earlier: new Map(earlier.map((charge) => [keyOf(charge.idempotency_scope!, charge.idempotency_key!), charge])),
        methods: new Map(methods.map((method) => [method.id, method])),
      });
    }
    return read;
  },
  async check(trx, item, family, read) {
    const { earlier, methods } = read.get(tenantKey(item.tenant))!;
    const { idempotency } = item.prepared;
    const made = idempotency && !item.prepared.inlineValues ? earlier.get(keyOf(scopeText(idempotency), idempotency.key)) : undefined;
    if (made) return { answer: { earlier: made } };
    const planned = await plan(deps, trx, item.tenant, item.gateway, { ...item.prepared, family, methods });
    return { store: { tenant: item.tenant, ...planned } };
  },
  store: storeAll,
});

/** Stores checked charges, one insert per tenant: each one's reservation, in order. */
async function storeAll(trx: Knex.Transaction, plans: Planned[]): Promise<Reserved[]> {
  const stored = new Map<Planned, ChargeRow>();
  for (const [, ofTenant] of groupBy(plans, (each) => tenantKey(each.tenant))) {
    const rows = await chargeRepo(trx, ofTenant[0]!.tenant).insertMany(ofTenant.map((each) => each.values));
    ofTenant.forEach((each, index) => stored.set(each, rows[index]!));
  }
  return plans.map((each) => ({ charge: stored.get(each)!, token: each.token, head: each.head }));
}

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
  const toStore: { index: number; planned: Planned }[] = [];
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
      toStore.push({ index: results.length, planned: { tenant, values, token, head } });
      results.push(undefined);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      results.push(error);
    }
  }
  const stored = await storeAll(trx, toStore.map((each) => each.planned));
  toStore.forEach((each, at) => (results[each.index] = stored[at]!));
  return results as (Reserved | ApiError)[];
}
