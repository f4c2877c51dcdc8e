/**
 * The checkout's documents: a document shown in `checkout` must be signed there before the
 * checkout takes a payment or sets up a plan (asked of documents, for every way in: pages and
 * the Portal API), and its signature is told — signature-document.signed with
 * customer.document.signed — in the transaction of the payment that went through (the seed's
 * rule), once.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { confirmCheckoutSignatures, unsignedCheckoutDocuments } from '../documents/document-signing';
import type { Visit } from './browser-sessions';
import type { AccountView } from './portal-accounts';
import { track } from './tracking';
import type { EventRecorder } from '../events/events';
import type { Tenant } from '../kernel/tenant';

/** A 409 naming the first document still to sign; nothing when all are signed. */
export async function requireCheckoutSignatures(deps: Pick<AppDeps, 'db'>, visit: Visit, view: AccountView): Promise<void> {
  const unsigned = await unsignedCheckoutDocuments(deps.db, visit.tenant, view.account.id);
  if (unsigned.length > 0) throw ApiError.conflict(`Please sign "${unsigned[0]!.name}" before you pay: open it above the payment form.`);
}

/** In the payment's transaction, once it went through. */
export async function tellCheckoutSignatures(trx: Knex.Transaction, deps: Pick<AppDeps, 'events'>, visit: Visit, view: AccountView): Promise<void> {
  await tellSignaturesOf(trx, deps.events, visit.tenant, { deviceId: visit.deviceId, customerId: visit.browser.customer_id, accountId: view.account.id, now: visit.now });
}

/** The same, from what a checkout kept of its visit (its charge finished by recovery). */
export async function tellSignaturesOf(
  trx: Knex.Transaction,
  events: EventRecorder,
  tenant: Tenant,
  who: { deviceId: string; customerId: string | null | undefined; accountId: string; now: Date },
): Promise<void> {
  const confirmed = await confirmCheckoutSignatures(trx, events, tenant, who.accountId, who.now);
  await track(
    trx,
    events,
    tenant,
    confirmed.map(() => ({ event: 'customer.document.signed' as const, deviceId: who.deviceId, occurredAt: who.now, customerId: who.customerId, debtAccountId: who.accountId })),
  );
}
