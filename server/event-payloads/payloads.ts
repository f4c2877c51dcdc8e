/**
 * The one place where rows become webhook payloads (the Event* schemas of the document).
 * Payloads differ from API objects on purpose: timestamps are `YYYY-MM-DD HH:MM:SS` in UTC
 * (spec 6.1), metadata records carry times, names are split, and nested objects are richer.
 * Everything a payload needs is loaded beforehand into PayloadRows (payload-reads.ts).
 */
import type { components } from '../../generated/schema';
import { BILLING_TYPES, sortBillingTypes } from '../kernel/billing-types';
import { bankAccount, cardToken } from '../kernel/masking';
import { eventTime } from './event-time';
import { builtOnce } from './built-once';
import type { AddressRow, CustomerRow, DebtAccountRow, ImportRow, LocationRow, PaymentMethodRow, PaymentPlanRow, PayloadRows, PlanChargeRow } from './payload-reads';

type S = components['schemas'];

/**
 * Per-key times are not kept, so each key carries its record's: created with the record,
 * changed when the record last changed.
 */
function metadataRecords(metadata: Record<string, string>, created: Date, updated: Date): S['EventMetadataRecord'][] {
  return Object.keys(metadata)
    .sort()
    .map((attribute) => ({ attribute, value: metadata[attribute]!, created_at: eventTime(created), updated_at: eventTime(updated) }));
}

/** First word and the rest; a single word (or a company name) cannot be split, so both are null. */
export function splitName(name: string): { first_name: string | null; last_name: string | null } {
  const words = name.trim().split(/\s+/);
  return words.length < 2 ? { first_name: null, last_name: null } : { first_name: words[0]!, last_name: words.slice(1).join(' ') };
}

function addressPayload(row: AddressRow): S['EventAddress'] {
  const { id, name, city, postal_code, country, line1, line2, state, is_primary } = row;
  return { id, name, city, postal_code, country, line1, line2, state, is_primary, created_at: eventTime(row.created_at), updated_at: eventTime(row.updated_at) };
}

/**
 * A payment method's billing address is its customer's primary address, when that address
 * is complete enough to bill (street, city and a two-letter state); null otherwise.
 */
function billingAddress(primary: AddressRow | undefined): S['EventBillingAddress'] | null {
  if (!primary?.line1 || !primary.city || !primary.state || !/^[A-Z]{2}$/.test(primary.state)) return null;
  return {
    name: primary.name,
    line1: primary.line1,
    line2: primary.line2,
    city: primary.city,
    state: primary.state,
    postal_code: primary.postal_code,
    created_at: eventTime(primary.created_at),
    updated_at: eventTime(primary.updated_at),
  };
}

/**
 * What charges a saved method: an active plan, an accepted offer not yet paid, a scheduled
 * charge not yet run. The plans and offers loaded are every account's of the method's customer
 * (payload-reads.ts loads a customer's accounts whole).
 */
export function methodUses(
  row: { id: string; has_scheduled_charge?: boolean },
  ctx: PayloadRows,
): Pick<S['EventPaymentMethod'], 'has_active_payment_plan' | 'has_active_settlement_offer' | 'has_active_scheduled_charge'> {
  // The methods that charge something, gathered once per recording (not a scan of every plan per method).
  const charging = builtOnce(ctx, 'charging-methods', () => ({
    // An account's plan in ctx is its latest, so an active one among them is the method's active plan.
    plans: new Set([...ctx.plans.values()].flatMap((plan) => (plan.status === 'active' && plan.payment_method_id ? [plan.payment_method_id] : []))),
    // An accepted offer not yet paid that charges this method (an account's latest offer is its open one).
    offers: new Set([...ctx.accountOffers.values()].flatMap((offer) => (offer.status === 'accepted' && offer.payment_method_id ? [offer.payment_method_id] : []))),
  }));
  return {
    has_active_payment_plan: charging.plans.has(row.id),
    has_active_settlement_offer: charging.offers.has(row.id),
    // Read with the method (payload-reads.ts).
    has_active_scheduled_charge: row.has_scheduled_charge === true,
  };
}

/**
 * Card number as its last four digits, ACH numbers masked: the full numbers are never stored
 * anyway. `primary` is the method's customer's primary address, so the method's id names it.
 */
function paymentMethodPayload(row: PaymentMethodRow, primary: AddressRow | undefined, ctx: PayloadRows): S['EventPaymentMethod'] {
  return builtOnce(ctx, `method:${row.id}`, () => ({
    id: row.id,
    type: row.type,
    card_token: cardToken(row),
    bank_account: bankAccount(row),
    is_primary: row.is_primary,
    billing_address: billingAddress(primary),
    ...methodUses(row, ctx),
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  }));
}

function accountLocation(row: LocationRow): S['EventAccountLocation'] {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    external_id: row.external_id,
    card: row.card,
    ach: row.ach,
    metadata: metadataRecords(row.metadata, row.created_at, row.updated_at),
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}

function accountRules(row: DebtAccountRow): { minimum_payment_amount: number | null } {
  return { minimum_payment_amount: row.rules.min_payment_amount ?? null };
}

/** `customer` is set only on the account found directly at `data.debt_account` (the document's rule). */
export function embeddedAccount(row: DebtAccountRow, ctx: PayloadRows, customer: S['EventEmbeddedCustomer'] | null): S['EventEmbeddedDebtAccount'] {
  return customer === null ? builtOnce(ctx, `account:${row.id}`, () => accountPart(row, ctx, null)) : accountPart(row, ctx, customer);
}

function accountPart(row: DebtAccountRow, ctx: PayloadRows, customer: S['EventEmbeddedCustomer'] | null): S['EventEmbeddedDebtAccount'] {
  const children = ctx.children.get(row.id) ?? [];
  const siblings = row.parent_id ? (ctx.children.get(row.parent_id) ?? []) : [];
  const rules = accountRules(row);
  return {
    id: row.id,
    is_parent: row.parent_id === null,
    has_siblings: siblings.some((sibling) => sibling.id !== row.id),
    has_children: children.length > 0,
    parent_external_id: row.parent_external_id,
    external_id: row.external_id,
    external_account_number: row.external_account_number,
    billing_type: row.billing_type ? sortBillingTypes(row.billing_type) : BILLING_TYPES,
    balance: Number(row.balance),
    current_balance: Number(row.current_balance),
    // A parent's current_balance is already the sum of its children's (the document's rule).
    total_current_balance: Number(row.current_balance),
    status: row.status,
    external_status: row.external_status,
    itemization: row.itemization,
    validation_notice_sent_at: row.validation_notice_sent_at,
    // When an account was paid off is not recorded yet.
    paid_off_at: null,
    rules,
    resource_rules: rules.minimum_payment_amount === null ? {} : { ...rules },
    customer,
    location: accountLocation(ctx.locations.get(row.location_id)!),
    metadata: metadataRecords(row.metadata, row.created_at, row.updated_at),
    children: children.map((child) => embeddedAccount(child, ctx, null)),
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}

function customerCore(row: CustomerRow, ctx: PayloadRows) {
  return builtOnce(ctx, `customer:${row.id}`, () => customerPart(row, ctx));
}

function customerPart(row: CustomerRow, ctx: PayloadRows) {
  const addresses = ctx.addresses.get(row.id) ?? [];
  const primary = addresses.find((address) => address.is_primary);
  return {
    id: row.id,
    ...splitName(row.name),
    name: row.name,
    email: row.email,
    email_source: row.email_source,
    email_work_address: row.email_work_address,
    email_creditor_notice_date: row.email_creditor_notice_date,
    // Portal activity (registration, log-ins) is not known to this service yet.
    username: null,
    phone: row.phone,
    date_of_birth: row.date_of_birth,
    last_activity_at: null,
    ssn_last4: row.ssn_last4,
    external_id: row.external_id,
    // Customer rules cannot be set through the API yet.
    rules: [],
    metadata: metadataRecords(row.metadata, row.created_at, row.updated_at),
    debt_accounts: (ctx.accountsOfCustomer.get(row.id) ?? []).map((account) => embeddedAccount(account, ctx, null)),
    addresses: addresses.map(addressPayload),
    payment_methods: (ctx.paymentMethods.get(row.id) ?? []).map((method) => paymentMethodPayload(method, primary, ctx)),
    registered_at: null,
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}

export function customerPayload(customerId: string, ctx: PayloadRows): S['EventCustomer'] {
  const core = customerCore(ctx.customers.get(customerId)!, ctx);
  return { ...core, has_debt_accounts: core.debt_accounts.length > 0 };
}

function embeddedCustomer(customerId: string, ctx: PayloadRows): S['EventEmbeddedCustomer'] {
  return { ...customerCore(ctx.customers.get(customerId)!, ctx), must_accept_policies: false, must_verify_customer: false, must_verify_address: false };
}

export function customerSummary(row: CustomerRow): S['EventCustomerSummary'] {
  const { id, name, email, phone, external_id } = row;
  return { id, ...splitName(name), name, email, phone, external_id, created_at: eventTime(row.created_at), updated_at: eventTime(row.updated_at) };
}

function planChargePayload(row: PlanChargeRow, ctx: PayloadRows): S['EventPaymentPlanCharge'] {
  return builtOnce(ctx, `instalment:${row.id}`, () => instalmentPart(row));
}

function instalmentPart(row: PlanChargeRow): S['EventPaymentPlanCharge'] {
  const amount = Number(row.amount);
  return {
    id: row.id,
    charge_date: row.charge_date,
    amount,
    status: row.status,
    successfully_charged_at: row.successfully_charged_at ? eventTime(row.successfully_charged_at) : null,
    attempts: row.attempts,
    scheduled: row.status === 'pending',
    skipped: row.status === 'canceled' || row.status === 'skipped',
    interest: 0,
    fees: [],
    total_fees_amount: 0,
    total_amount: amount,
    settlement_offer: null,
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}

/**
 * A plan with its instalments (none before enrolment), the method it charges, and the
 * instalment last paid and next due. This service adds no interest or fees to instalments.
 */
export function planPayload(plan: PaymentPlanRow, account: DebtAccountRow, ctx: PayloadRows, withCustomer: boolean): S['EventPaymentPlan'] {
  return builtOnce(ctx, `plan:${plan.id}:${withCustomer}`, () => planPart(plan, account, ctx, withCustomer));
}

function planPart(plan: PaymentPlanRow, account: DebtAccountRow, ctx: PayloadRows, withCustomer: boolean): S['EventPaymentPlan'] {
  const charges = ctx.planCharges.get(plan.id) ?? [];
  const live = charges.filter((charge) => charge.status !== 'canceled');
  const paid = charges.filter((charge) => charge.status === 'succeeded');
  const next = charges.find((charge) => charge.status === 'pending');
  const method = plan.payment_method_id ? ctx.planMethods.get(plan.payment_method_id) : undefined;
  const primary = method ? (ctx.addresses.get(method.customer_id) ?? []).find((address) => address.is_primary) : undefined;
  return {
    id: plan.id,
    frequency: plan.frequency,
    start_date: plan.start_date,
    end_date: live.length > 0 ? live[live.length - 1]!.charge_date : null,
    amount: plan.amount === null ? null : Number(plan.amount),
    status: plan.status,
    charges: charges.map((charge) => planChargePayload(charge, ctx)),
    charges_total_amount: paid.reduce((sum, charge) => sum + Number(charge.amount), 0),
    payment_method: method ? paymentMethodPayload(method, primary, ctx) : null,
    debt_account: { ...embeddedAccount(account, ctx, withCustomer ? embeddedCustomer(account.customer_id, ctx) : null), fees: [] },
    enrolled_at: plan.enrolled_at ? eventTime(plan.enrolled_at) : null,
    canceled_at: plan.canceled_at ? eventTime(plan.canceled_at) : null,
    recurring_day: plan.frequency === 'monthly' && plan.start_date ? Number(plan.start_date.slice(8, 10)) : null,
    source: 'api',
    source_name: 'API',
    fees: [],
    total_interest: 0,
    total_fees: 0,
    latest_charge: paid.length > 0 ? planChargePayload(paid[paid.length - 1]!, ctx) : null,
    next_charge: next ? planChargePayload(next, ctx) : null,
    rules: { unscheduled_payment_plan_editable: plan.status === 'pending_configuration' },
    created_at: eventTime(plan.created_at),
    updated_at: eventTime(plan.updated_at),
  };
}

export function paymentPlanPayload(accountId: string, ctx: PayloadRows): S['EventPaymentPlan'] {
  const account = ctx.accounts.get(accountId)!;
  return planPayload(ctx.plans.get(accountId)!, account, ctx, true);
}

export function debtAccountPayload(accountId: string, ctx: PayloadRows): S['EventDebtAccount'] {
  const row = ctx.accounts.get(accountId)!;
  const { customer: _nested, ...embedded } = embeddedAccount(row, ctx, null);
  const children = ctx.children.get(row.id) ?? [];
  const parent = row.parent_id ? ctx.accounts.get(row.parent_id) : undefined;
  const plan = ctx.plans.get(row.id);
  return {
    ...embedded,
    customer: customerSummary(ctx.customers.get(row.customer_id)!),
    // Filled beside: the latest charges and transactions (payment-payloads.ts), documents
    // (document-ticket-payloads.ts), disputes and active_dispute (dispute-payloads.ts).
    charges: [],
    transactions: [],
    payment_plan: plan ? planPayload(plan, row, ctx, false) : null,
    documents: [],
    disputes: [],
    fees: [],
    first_child: children[0] ? embeddedAccount(children[0], ctx, null) : null,
    parent: parent ? embeddedAccount(parent, ctx, null) : null,
    scheduled_charges: [],
    active_dispute: null,
    // Filled beside (settlement-payloads.ts).
    settlement_offer: null,
    accepted_debt_account_settlement_offer: null,
  };
}

export function locationPayload(locationId: string, ctx: PayloadRows): S['EventLocation'] {
  const row = ctx.locations.get(locationId)!;
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    external_id: row.external_id,
    // Location rules cannot be set through the API yet.
    rules: [],
    card: row.card,
    ach: row.ach,
    metadata: metadataRecords(row.metadata, row.created_at, row.updated_at),
    debt_accounts_count: ctx.locationUsage.get(row.id) ?? 0,
    created_at: eventTime(row.created_at),
    updated_at: eventTime(row.updated_at),
  };
}

/** import.complete, for the bulk action when it finishes (the shape is the document's decision). */
export function importCompletePayload(bulkId: string, ctx: PayloadRows): S['EventImport'] {
  const bulk: ImportRow = ctx.imports.get(bulkId)!;
  return {
    bulk_id: bulk.id,
    count: bulk.count,
    processed: bulk.count,
    failed: bulk.failed,
    status: 'completed',
    created_at: eventTime(bulk.created_at),
    completed_at: eventTime(bulk.completed_at),
  };
}
