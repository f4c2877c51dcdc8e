/**
 * In-process listeners, the other half of the events port: a feature says what it did, in the
 * transaction that did it, and a feature above it reacts in that same transaction, before it
 * commits, without the one below importing the one above (payments say an account was paid;
 * payment plans complete or reopen the plan). A listener that throws rolls the whole
 * transaction back, as a direct call would.
 *
 * Listeners register once per process, when the service is put together (createApp,
 * startWorkers), and run one after the other in the order they registered.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import type { EventRecorder } from './events';

export interface Happenings {
  /** A charge outside a plan's own run lowered the balances of `accountIds` (made now or scheduled). */
  'charge.paid-accounts': { accountIds: string[]; now: Date; chargeId?: string };
  /** The gateway declined the charge `charge` (made now, or a scheduled one on its day). */
  'charge.declined': { charge: { id: string; debt_account_id: string }; now: Date };
  /** A void or refund of the charge `chargeId` raised the balances of `accountIds`. */
  'money.given-back': { accountIds: string[]; chargeId: string | null };
  /** An agency's update of the accounts `accountIds` (their balance may have changed). */
  'account.updated': { accountIds: string[] };
  /** A plan's own instalment, the charge `chargeId`, lowered the balance of `accountIds`. */
  'instalment.paid': { accountIds: string[]; chargeId: string; now: Date };
  /** The plan `planId` of the account `accountId` defaulted. */
  'plan.defaulted': { planId: string; accountId: string; now: Date };
  /** The gateway's answer for a `processing` charge was recorded (by its request or by recovery): `charge` as it now is. */
  'charge.finished': {
    charge: {
      id: string;
      status: string;
      amount: string;
      /** Who the charge is for (`api`, `payment_plan`, `autopay`, `settlement_offer`): a listener skips what is not its own by it, without a query. */
      source: string;
      payment_plan_charge_id: string | null;
      /** The scope of its Idempotency-Key (`token:…` for the API's callers, `portal:…` for the Portal's), or null. */
      idempotency_scope: string | null;
      error: string | null;
      error_code: string | null;
    };
    declined?: { message: string; errorCode: string };
    now: Date;
  };
  /** The bank returned the ACH debit `charge`; its balances are already given back. */
  'ach.returned': { charge: { id: string; payment_plan_id: string | null; payment_plan_charge_id: string | null; error: string | null; return_code: string | null }; now: Date };
  /** The scheduled charge `charge` was canceled before it ran (by `POST /charges/{id}/cancel`, or by the scheduler on its day); nothing moved. */
  'charge.canceled': { charge: { id: string; debt_account_id: string }; now: Date };
}

export type Listener<K extends keyof Happenings> = (trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, what: Happenings[K]) => Promise<void>;

/** One happening of a batch, with its tenant (a batch may hold many tenants' happenings). */
export interface Happened<K extends keyof Happenings> {
  tenant: Tenant;
  what: Happenings[K];
}

/**
 * A listener of a batch of happenings of one name at once (the answers of many charges recorded
 * in one transaction): reacts to all of them with a statement per kind of row instead of one per
 * happening. It must do what it would do for each happening alone, in their order.
 */
export type BatchListener<K extends keyof Happenings> = (trx: Knex.Transaction, events: EventRecorder, happened: Happened<K>[]) => Promise<void>;

type Registered<K extends keyof Happenings> = { one: Listener<K> } | { all: BatchListener<K> };

const listeners: { [K in keyof Happenings]?: Registered<K>[] } = {};

function register<K extends keyof Happenings>(name: K, entry: Registered<K>): void {
  const list = (listeners[name] ??= []) as Registered<K>[];
  const same = (each: Registered<K>) => ('one' in each && 'one' in entry && each.one === entry.one) || ('all' in each && 'all' in entry && each.all === entry.all);
  if (!list.some(same)) list.push(entry);
}

/** Adds `listener` for `name`; the same listener twice is kept once. */
export function listen<K extends keyof Happenings>(name: K, listener: Listener<K>): void {
  register(name, { one: listener });
}

/** Adds a batch listener for `name` (called once per announceAll, and with one happening per announce); the same twice is kept once. */
export function listenAll<K extends keyof Happenings>(name: K, listener: BatchListener<K>): void {
  register(name, { all: listener });
}

/** Runs the listeners of `name`, in `trx`. */
export async function announce<K extends keyof Happenings>(trx: Knex.Transaction, events: EventRecorder, tenant: Tenant, name: K, what: Happenings[K]): Promise<void> {
  await announceAll(trx, events, name, [{ tenant, what }]);
}

/**
 * Runs the listeners of `name` for the happenings `happened`, in `trx`, listener after listener
 * in the order they registered: a batch listener once with them all, any other once per
 * happening, in their order.
 */
export async function announceAll<K extends keyof Happenings>(trx: Knex.Transaction, events: EventRecorder, name: K, happened: Happened<K>[]): Promise<void> {
  if (happened.length === 0) return;
  for (const entry of (listeners[name] ?? []) as Registered<K>[]) {
    if ('all' in entry) await entry.all(trx, events, happened);
    else for (const { tenant, what } of happened) await entry.one(trx, events, tenant, what);
  }
}
