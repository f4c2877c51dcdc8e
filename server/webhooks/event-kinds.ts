/**
 * What each recorded event needs loaded and how its payload is built. A new emitter (charges,
 * transactions, plans, tracking events) adds its event names here, with what to load in
 * payload-reads.ts and a builder in payloads.ts; the resource code only records the event.
 */
import type { EventName } from '../events/events';
import type { Needs, PayloadRows } from './payload-reads';
import { customerPayload, debtAccountPayload, importCompletePayload, locationPayload, paymentPlanPayload } from './payloads';
import { trackingPayload } from './tracking-payloads';
import { disputePayload } from './dispute-payloads';
import type { Tenant } from '../kernel/tenant';
import { accountPayments, chargePayload, moneyBackPayload, scheduledChargePayload, transactionPayload } from './payment-payloads';

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
  },
  build: (id, rows) => (rows.accounts.has(id) ? { ...debtAccountPayload(id, rows), ...accountPayments(id, rows) } : undefined),
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
  'debt-account-dispute.create': dispute,
  'debt-account-dispute.update': dispute,
};

export function kindOf(name: EventName): Kind {
  const kind = KINDS[name];
  // A programming error, not a request's: an event was recorded that nothing can describe.
  if (!kind) throw new Error(`No payload is known for the event ${name}.`);
  return kind;
}
