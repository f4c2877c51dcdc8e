/**
 * What each recorded event needs loaded and how its payload is built. A new emitter (charges,
 * transactions, plans, tracking events) adds its event names here, with what to load in
 * payload-reads.ts and a builder in payloads.ts; the resource code only records the event.
 */
import type { EventName } from '../events/events';
import type { Needs, PayloadRows } from './payload-reads';
import { customerPayload, debtAccountPayload, importCompletePayload, locationPayload, paymentPlanPayload } from './payloads';
import { trackingPayload } from './tracking-payloads';
import { accountDocumentsPayload, signedDocumentPayload, ticketPayload } from './document-ticket-payloads';
import { accountOffers, settlementOfferPayload } from './settlement-payloads';
import { accountDisputes, disputePayload } from './dispute-payloads';
import type { Tenant } from '../kernel/tenant';
import { accountPayments, chargePayload, moneyBackPayload, scheduledChargePayload, transactionPayload } from './payment-payloads';
import { externalChargeToApi } from '../external-charges/external-charge-mapper';

interface Kind {
  /** Adds what the payload of the record `id` needs to `needs`. */
  need(needs: Needs, id: string): void;
  /** The payload's `data`; undefined when there is nothing to tell (the record is gone, an account has no plan). */
  build(id: string, rows: PayloadRows, tenant: Tenant): object | undefined;
}

const dispute: Kind = {
  need: (needs, id) => needs.disputes.add(id),
  build: (id, rows, tenant) => (rows.disputes.has(id) ? disputePayload(id, rows, tenant) : undefined),
};

const customer: Kind = {
  need: (needs, id) => needs.customers.add(id),
  build: (id, rows) => (rows.customers.has(id) ? customerPayload(id, rows) : undefined),
};

const debtAccount: Kind = {
  need: (needs, id) => {
    needs.accounts.add(id);
    needs.payments.latestOf.add(id);
    needs.accountDisputes.add(id);
  },
  build: (id, rows, tenant) =>
    rows.accounts.has(id)
      ? {
          ...debtAccountPayload(id, rows),
          ...accountPayments(id, rows),
          ...accountOffers(id, rows),
          ...accountDisputes(id, rows, tenant),
          documents: accountDocumentsPayload(rows.docs.accountDocuments.get(id)),
        }
      : undefined,
};

/** A signature of a document: the document as it is, signed when the signature was (or its checkout paid). */
const signedDocument: Kind = {
  need: (needs, id) => needs.signatures.add(id),
  build: (id, rows) => {
    const row = rows.docs.signed.get(id);
    return row ? signedDocumentPayload(row) : undefined;
  },
};

const ticket: Kind = {
  need: (needs, id) => needs.tickets.add(id),
  build: (id, rows) => {
    const row = rows.docs.tickets.get(id);
    return row ? ticketPayload(row, rows.docs.ticketMessages.get(id)) : undefined;
  },
};

const charge: Kind = {
  need: (needs, id) => needs.payments.charges.add(id),
  build: (id, rows) => {
    const row = rows.payments.charges.get(id);
    return row ? chargePayload(row, rows) : undefined;
  },
};

/** A scheduled charge is its charge row: loaded like a charge, shown with `charge` once it ran. */
const scheduledCharge: Kind = {
  need: (needs, id) => needs.payments.charges.add(id),
  build: (id, rows) => {
    const row = rows.payments.charges.get(id);
    return row ? scheduledChargePayload(row, rows) : undefined;
  },
};

/** A void or a refund, named by one of the transactions it made. */
const moneyBack: Kind = {
  need: (needs, id) => needs.payments.transactions.add(id),
  build: (id, rows) => (rows.payments.transactions.has(id) ? moneyBackPayload(id, rows) : undefined),
};

const transaction: Kind = {
  need: (needs, id) => needs.payments.transactions.add(id),
  build: (id, rows) => {
    const row = rows.payments.transactions.get(id);
    return row ? transactionPayload(row, rows) : undefined;
  },
};

/** The external charge as the API shows it; the delivery encrypts it (signing.ts). */
const externalCharge: Kind = {
  need: (needs, id) => needs.payments.externalCharges.add(id),
  build: (id, rows) => {
    const row = rows.payments.externalCharges.get(id);
    return row ? externalChargeToApi(row, rows.payments.transactionsOfExternal.get(id) ?? []) : undefined;
  },
};

const paymentPlan: Kind = {
  need: (needs, id) => needs.accountsWithCustomer.add(id),
  build: (id, rows) => (rows.accounts.has(id) && rows.plans.has(id) ? paymentPlanPayload(id, rows) : undefined),
};

const location: Kind = {
  need: (needs, id) => needs.locations.add(id),
  build: (id, rows) => (rows.locations.has(id) ? locationPayload(id, rows) : undefined),
};

const bulkImport: Kind = {
  need: (needs, id) => needs.imports.add(id),
  build: (id, rows) => (rows.imports.has(id) ? importCompletePayload(id, rows) : undefined),
};

/** A settlement offer, named by its id. */
const settlementOffer: Kind = {
  need: (needs, id) => needs.offers.add(id),
  build: (id, rows) => {
    const row = rows.offers.get(id);
    return row ? settlementOfferPayload(row, rows) : undefined;
  },
};

/** A tracking event (spec 6.5), named by its row of Portal activity. */
const tracking: Kind = {
  need: (needs, id) => needs.activity.add(id),
  build: (id, rows) => {
    const row = rows.activity.get(id);
    return row ? trackingPayload(row) : undefined;
  },
};

/** The tracking events the Portal reports today. */
export const TRACKING_EVENTS = [
  'customer.session.verification.success',
  'customer.session.verification.failed',
  'customer.checkout.one-time-payment.amount.success',
  'customer.checkout.one-time-payment.amount.failed',
  'customer.checkout.one-time-payment.full-amount.success',
  'customer.checkout.one-time-payment.full-amount.failed',
  'customer.checkout.one-time-payment.amount.scheduled.success',
  'customer.checkout.one-time-payment.full-amount.scheduled.success',
  'customer.checkout.payment-plan.success',
  'customer.checkout.payment-plan.failed',
  'customer.checkout.payment-plan.custom.success',
  'customer.checkout.payment-plan.suggested.success',
  'customer.checkout.policy.accepted',
  'customer.document.signed',
  'customer.payment-plan.updated',
  'customer.call-to-action.modal.displayed',
  'customer.call-to-action.modal.action-button.clicked',
  'customer.call-to-action.modal.closed',
  'guest.customer.checkout.verification.success',
  'guest.customer.checkout.verification.failed',
  'guest.customer.one-time-payment.success',
  'guest.customer.one-time-payment.failed',
  'guest.customer.one-time-payment.full-amount.success',
  'guest.customer.one-time-payment.full-amount.failed',
  'customer.checkout.autopay.custom.success',
  'guest.customer.checkout.single-step.verification.success',
  'guest.customer.checkout.single-step.verification.failed',
  'guest.registration.verification.success',
  'guest.registration.verification.failed',
  'guest.registration.success',
  'guest.registration.failed',
  'customer.login.success',
  'customer.login.failed',
  'customer.checkout.settlement-offer.full-amount.success',
  'customer.checkout.settlement-offer.full-amount.failed',
  'customer.checkout.settlement-offer.full-amount.scheduled.success',
  'customer.checkout.settlement-offer.payment-plan.success',
  'guest.customer.checkout.settlement-offer.full-amount.success',
  'guest.customer.checkout.settlement-offer.full-amount.failed',
  'customer.dispute.created',
  'guest.dispute.created',
  'guest.dispute.registration.verification.success',
  'guest.dispute.registration.verification.failed',
] as const satisfies readonly EventName[];

const KINDS: Partial<Record<EventName, Kind>> = {
  ...Object.fromEntries(TRACKING_EVENTS.map((name) => [name, tracking])),
  'customer.create': customer,
  'customer.update': customer,
  'customer.delete': customer,
  'debt-account.create': debtAccount,
  'debt-account.update': debtAccount,
  'debt-account.delete': debtAccount,
  'payment-plan.create': paymentPlan,
  'payment-plan.update': paymentPlan,
  'payment-plan.delete': paymentPlan,
  'location.create': location,
  'location.update': location,
  'location.delete': location,
  'import.complete': bulkImport,
  'charge.succeeded': charge,
  'charge.failed': charge,
  'void.succeeded': moneyBack,
  'refund.succeeded': moneyBack,
  'transaction.settled-ach': transaction,
  'transaction.returned-ach': transaction,
  'scheduled-charge.create': scheduledCharge,
  'scheduled-charge.update': scheduledCharge,
  'scheduled-charge.delete': scheduledCharge,
  'external-charge.create': externalCharge,
  'signature-document.signed': signedDocument,
  'ticket.create': ticket,
  'ticket.update': ticket,
  'debt-account-settlement-offer.create': settlementOffer,
  'debt-account-settlement-offer.update': settlementOffer,
  'debt-account-dispute.create': dispute,
  'debt-account-dispute.update': dispute,
};

export function kindOf(name: EventName): Kind {
  const kind = KINDS[name];
  // A programming error, not a request's: an event was recorded that nothing can describe.
  if (!kind) throw new Error(`No payload is known for the event ${name}.`);
  return kind;
}
