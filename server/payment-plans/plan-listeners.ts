/**
 * What payments tell payment plans, through the events port: a one-time charge that pays an
 * account off completes its plan, and a returned ACH debit of an instalment reopens it
 * (plan-payments.ts holds both rules).
 */
import { listen, listenAll, type BatchListener, type Listener } from '../events/listeners';
import { completePaidOffPlansOf, reopenReturnedInstalment } from './plan-payments';
import { tenantKey } from '../payments/family-locks';
import { finishInstalments } from './instalment-outcome';

/** Payments of a batch: the plans of their accounts read once per tenant. */
const completePlans: BatchListener<'charge.paid-accounts'> = async (trx, events, happened) => {
  const byTenant = new Map<string, typeof happened>();
  for (const each of happened) byTenant.set(tenantKey(each.tenant), [...(byTenant.get(tenantKey(each.tenant)) ?? []), each]);
  for (const group of byTenant.values()) await completePaidOffPlansOf(trx, events, group[0]!.tenant, group.map(({ what }) => what));
};
const reopenInstalment: Listener<'ach.returned'> = (trx, events, tenant, { charge, now }) => reopenReturnedInstalment(trx, events, tenant, charge, now);

const finishAttempts: BatchListener<'charge.finished'> = (trx, events, happened) => finishInstalments(trx, events, happened);

/** Registers the plans' listeners (once, however often it is called). */
export function listenToPayments(): void {
  listenAll('charge.paid-accounts', completePlans);
  listen('ach.returned', reopenInstalment);
  listenAll('charge.finished', finishAttempts);
}
