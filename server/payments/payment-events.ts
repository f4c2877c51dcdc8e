/**
 * What payments say happened, through the events port, in one place. The webhooks module
 * builds the payloads; this file only names the records.
 */
import type { Knex } from 'knex';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';
import type { ChargeRow, TransactionRow } from '../charge-store/charge-repo';
import { announce } from '../events/listeners';

/** charge.succeeded (a pending ACH debit too) or charge.failed, and the accounts whose balance moved. */
export function chargeMade(events: EventRecorder, trx: Knex.Transaction, tenant: Tenant, charge: ChargeRow, moved: string[]): Promise<void> {
  return events.record(trx, tenant, [
    { name: charge.status === 'failed' ? 'charge.failed' : 'charge.succeeded', ids: [charge.id] },
    { name: 'debt-account.update', ids: moved },
  ]);
}

/** A void or refund is named by the first transaction it made (whose charge it gives back). */
export async function moneyGivenBack(
  events: EventRecorder,
  trx: Knex.Transaction,
  tenant: Tenant,
  name: 'void.succeeded' | 'refund.succeeded',
  made: TransactionRow[],
  moved: string[],
): Promise<void> {
  await announce(trx, events, tenant, 'money.given-back', { accountIds: moved, chargeId: made[0]?.charge_id ?? null });
  return events.record(trx, tenant, [
    { name, ids: made.slice(0, 1).map((row) => row.id) },
    { name: 'debt-account.update', ids: moved },
  ]);
}

export function achOutcome(
  events: EventRecorder,
  trx: Knex.Transaction,
  tenant: Tenant,
  name: 'transaction.settled-ach' | 'transaction.returned-ach',
  made: TransactionRow[],
  moved: string[],
): Promise<void> {
  return events.record(trx, tenant, [
    { name, ids: made.map((row) => row.id) },
    { name: 'debt-account.update', ids: moved },
  ]);
}

/** A method saved with a charge changes the customer's payload, as saving it directly does. */
export function paymentMethodSaved(events: EventRecorder, trx: Knex.Transaction, tenant: Tenant, customerId: string): Promise<void> {
  return events.record(trx, tenant, [{ name: 'customer.update', ids: [customerId] }]);
}
