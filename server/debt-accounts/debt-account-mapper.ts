/** The one place where debt-account rows become API objects. */
import type { components } from '../../generated/schema';
import { metadataToApi } from '../customer-store/customer-mapper';
import type { CustomerRow } from '../customer-store/customer-repo';
import { locationToApi } from '../locations/location-mapper';
import type { LocationRow } from '../locations/location-repo';
import type { DebtAccountRow, PaymentPlanRow } from './debt-account-repo';
import type { ChargeRow, TransactionRow } from '../charge-store/charge-repo';
import { chargeToApi, transactionToApi } from '../charge-store/charge-mapper';
import { BILLING_TYPES, sortBillingTypes } from '../kernel/billing-types';
import { autopayToApi, type AutopayRow } from './account-autopay';
import { validationPeriodEndsOn } from '../kernel/validation-period';

type Schemas = components['schemas'];

export function paymentPlanToApi(row: PaymentPlanRow): Schemas['PaymentPlan'] {
  return {
    id: row.id,
    frequency: row.frequency,
    start_date: row.start_date,
    amount: row.amount === null ? null : Number(row.amount),
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface AccountDocument {
  id: string;
  debt_account_id: string;
  name: string;
  created_at: Date;
}

export interface DebtAccountRelations {
  include: Set<string>;
  customers: Map<string, CustomerRow>;
  locations: Map<string, LocationRow>;
  additional: Map<string, string[]>;
  plans: Map<string, PaymentPlanRow>;
  autopays: Map<string, AutopayRow>;
  /** Accounts using each location, for Location.debt_accounts_count. */
  usage: Map<string, number>;
  /** The latest charges and transactions of each account, newest first. */
  charges: Map<string, ChargeRow[]>;
  transactions: Map<string, TransactionRow[]>;
  /** The documents shown to each account's customer, oldest first. */
  documents: Map<string, AccountDocument[]>;
  /** Each account's disputes as API objects, newest first. */
  disputes: Map<string, Schemas['Dispute'][]>;
}

export function debtAccountToApi(row: DebtAccountRow, relations: DebtAccountRelations): Schemas['DebtAccount'] {
  const { include, customers, locations, additional, plans, autopays, usage, charges, transactions, documents } = relations;
  const disputes = relations.disputes.get(row.id) ?? [];
  const location = locations.get(row.location_id)!;
  const customer = customers.get(row.customer_id);
  const plan = plans.get(row.id);
  const located = (loc: LocationRow) => locationToApi(loc, usage.get(loc.id) ?? 0);
  return {
    id: row.id,
    external_id: row.external_id,
    parent_external_id: row.parent_external_id,
    ...(include.has('customer') && customer
      ? { customer: { id: customer.id, external_id: customer.external_id, name: customer.name, email: customer.email, phone: customer.phone } }
      : {}),
    billing_type: row.billing_type ? sortBillingTypes(row.billing_type) : BILLING_TYPES,
    balance: Number(row.balance),
    current_balance: Number(row.current_balance),
    external_company_id: location.external_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    rules: row.rules,
    ...(include.has('location') ? { location: located(location) } : {}),
    ...(include.has('locations') ? { locations: (additional.get(row.id) ?? []).map((id) => located(locations.get(id)!)) } : {}),
    transactions: (transactions.get(row.id) ?? []).map(transactionToApi),
    payment_plan: plan ? paymentPlanToApi(plan) : null,
    autopay: autopays.has(row.id) ? autopayToApi(autopays.get(row.id)!) : null,
    charges: (charges.get(row.id) ?? []).map(chargeToApi),
    documents: (documents.get(row.id) ?? []).map((document) => ({ id: document.id, name: document.name, created_at: document.created_at.toISOString() })),
    external_account_number: row.external_account_number,
    external_status: row.external_status,
    status: row.status,
    itemization: row.itemization,
    validation_notice_sent_at: row.validation_notice_sent_at,
    validation_period_ends_on: row.validation_notice_sent_at ? validationPeriodEndsOn(row.validation_notice_sent_at) : null,
    disputes,
    active_dispute: disputes.find((dispute) => dispute.status === 'pending' || dispute.status === 'under_review') ?? null,
    ...(include.has('metadata') ? { metadata: metadataToApi(row.metadata) } : {}),
  };
}
