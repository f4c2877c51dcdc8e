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

/** A 409 naming the first document still to sign; nothing when all are signed. */
export async function requireCheckoutSignatures(deps: Pick<AppDeps, 'db'>, visit: Visit, view: AccountView): Promise<void> {
  const unsigned = await unsignedCheckoutDocuments(deps.db, visit.tenant, view.account.id);
  if (unsigned.length > 0) throw ApiError.conflict(`Please sign "${unsigned[0]!.name}" before you pay: open it above the payment form.`);
}

/** In the payment's transaction, once it went through. */
export async function tellCheckoutSignatures(trx: Knex.Transaction, deps: Pick<AppDeps, 'events'>, visit: Visit, view: AccountView): Promise<void> {
  const confirmed = await confirmCheckoutSignatures(trx, deps.events, visit.tenant, view.account.id, visit.now);
  await track(
    trx,
    deps.events,
    visit.tenant,
    confirmed.map(() => ({ event: 'customer.document.signed' as const, deviceId: visit.deviceId, occurredAt: visit.now, customerId: visit.browser.customer_id, debtAccountId: view.account.id })),
  );
}
