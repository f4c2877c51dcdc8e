/** The one place where customer-side rows become API objects. */
import type { components } from '../../generated/schema';
import type { AddressRow } from './address-repo';
import type { CustomerRow } from './customer-repo';

type Schemas = components['schemas'];

export function metadataToApi(metadata: Record<string, string>): Schemas['MetadataItem'][] {
  return Object.keys(metadata)
    .sort()
    .map((attribute) => ({ attribute, value: metadata[attribute]! }));
}

export function addressToApi(row: AddressRow): Schemas['Address'] {
  return {
    id: row.id,
    name: row.name,
    line1: row.line1,
    line2: row.line2,
    city: row.city,
    state: row.state,
    country: row.country,
    postal_code: row.postal_code,
    is_primary: row.is_primary,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface CustomerRelations {
  include: Set<string>;
  addresses: AddressRow[];
  paymentMethods: Schemas['PaymentMethod'][];
  debtAccounts: Schemas['DebtAccount'][];
  portalAccount: Schemas['CustomerPortalAccount'] | null;
}

export function customerToApi(row: CustomerRow, { include, addresses, paymentMethods, debtAccounts, portalAccount }: CustomerRelations): Schemas['Customer'] {
  // Fields in the document's order; the included lists only when asked for.
  const customer: Schemas['Customer'] = {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    email: row.email,
    email_source: row.email_source,
    email_work_address: row.email_work_address,
    email_creditor_notice_date: row.email_creditor_notice_date,
    phone: row.phone,
    date_of_birth: row.date_of_birth,
    ssn: row.ssn_last4,
    time_zone: row.time_zone,
    communication_preferences: {
      email: row.email_preference,
      changed_at: row.email_preference_changed_at?.toISOString() ?? null,
      changed_by: row.email_preference_changed_by,
    },
    portal_account: portalAccount,
  } as Schemas['Customer'];
  if (include.has('metadata')) customer.metadata = metadataToApi(row.metadata);
  if (include.has('addresses')) customer.addresses = addresses.map(addressToApi);
  // Customer rules cannot be set through the API yet (see the document).
  if (include.has('rules')) customer.rules = [];
  if (include.has('debt_accounts')) customer.debt_accounts = debtAccounts;
  if (include.has('payment_methods')) customer.payment_methods = paymentMethods;
  customer.created_at = row.created_at.toISOString();
  customer.updated_at = row.updated_at.toISOString();
  return customer;
}

/** The create answer names the address list `address` (spec 2.2). */
export function createdCustomerToApi(customer: Schemas['Customer']): Schemas['CustomerCreated'] {
  const { addresses, ...rest } = customer;
  return addresses === undefined ? rest : { ...rest, address: addresses };
}
