import type { components } from '../../generated/schema';
import { addressToApi } from '../customers/customer-mapper';
import type { AddressRow } from '../customers/address-repo';
import { isExpired, type CardBrand } from './card';
import type { PaymentMethodRow } from './payment-method-repo';

type PaymentMethod = components['schemas']['PaymentMethod'];

export interface PaymentMethodExtras {
  withChargeable?: boolean;
  /** The customer's primary address, or null; given only when asked for. */
  billingAddress?: AddressRow | null;
}

export function isChargeable(row: PaymentMethodRow, now: Date = new Date()): boolean {
  return row.type === 'ach' || !isExpired(row.card_exp_month!, row.card_exp_year!, now);
}

/** A card as it may be shown: last four digits, brand, expiry; the number itself is never kept. */
export function cardToken(row: PaymentMethodRow): components['schemas']['CardToken'] | null {
  if (row.type !== 'card') return null;
  return {
    card_holder: row.card_holder!,
    card_number: row.card_last4!,
    expiration_month: row.card_exp_month!,
    expiration_year: row.card_exp_year!,
    card_type: row.card_brand as CardBrand,
    card_zip: row.card_zip,
  };
}

/** A bank account as it may be shown: routing and account numbers masked. */
export function bankAccount(row: PaymentMethodRow): components['schemas']['BankAccount'] | null {
  if (row.type !== 'ach') return null;
  return {
    account_holder: row.account_holder!,
    account_type: row.account_type!,
    ownership_type: 'personal',
    routing_number: row.routing_number_masked!,
    account_number: row.account_number_masked!,
    account_zip: row.account_zip!,
    account_state: row.account_state!,
  };
}

export function paymentMethodToApi(row: PaymentMethodRow, extras: PaymentMethodExtras = {}): PaymentMethod {
  return {
    id: row.id,
    type: row.type,
    card_token: cardToken(row),
    bank_account: bankAccount(row),
    is_primary: row.is_primary,
    ...(extras.withChargeable ? { chargeable: isChargeable(row) } : {}),
    ...(extras.billingAddress !== undefined ? { billing_address: extras.billingAddress && addressToApi(extras.billingAddress) } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
