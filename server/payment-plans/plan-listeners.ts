/**
 * What payments tell payment plans, through the events port: a one-time charge that pays an
 * account off completes its plan, and a returned ACH debit of an instalment reopens it
 * (plan-payments.ts holds both rules).
 */
import { listen, listenAll, type BatchListener, type Listener } from '../events/listeners';
import { completePaidOffPlans, reopenReturnedInstalment } from './plan-payments';
import { finishInstalments } from './instalment-outcome';

const completePlans: Listener<'charge.paid-accounts'> = (trx, events, tenant, { accountIds, now }) => completePaidOffPlans(trx, events, tenant, accountIds, now);
const reopenInstalment: Listener<'ach.returned'> = (trx, events, tenant, { charge, now }) => reopenReturnedInstalment(trx, events, tenant, charge, now);

const finishAttempts: BatchListener<'charge.finished'> = (trx, events, happened) => finishInstalments(trx, events, happened);

/** Registers the plans' listeners (once, however often it is called). */
export function listenToPayments(): void {
  listen('charge.paid-accounts', completePlans);
  listen('ach.returned', reopenInstalment);
  listenAll('charge.finished', finishAttempts);
}
