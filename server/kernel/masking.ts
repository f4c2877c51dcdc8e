/**
 * A stored payment method as it may be shown, in API answers and webhook payloads alike: a
 * card as its last four digits, brand and expiry (the number itself is never kept), a bank
 * account with its numbers masked.
 */
import type { components } from '../../generated/schema';

type CardBrand = components['schemas']['CardBrand'];

/** The columns of a stored payment method that may be shown. */
export interface ShownPaymentMethod {
  type: 'card' | 'ach';
  card_holder: string | null;
  card_last4: string | null;
  card_brand: string | null;
  card_exp_month: number | null;
  card_exp_year: number | null;
  card_zip: string | null;
  account_holder: string | null;
  account_type: 'checking' | 'savings' | null;
  routing_number_masked: string | null;
  account_number_masked: string | null;
  account_zip: string | null;
  account_state: string | null;
}

export function cardToken(row: ShownPaymentMethod): components['schemas']['CardToken'] | null {
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

export function bankAccount(row: ShownPaymentMethod): components['schemas']['BankAccount'] | null {
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
