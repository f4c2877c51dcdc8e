import type { components } from '../../generated/schema';
import { addressToApi } from '../customer-store/customer-mapper';
import type { AddressRow } from '../customer-store/address-repo';
import { bankAccount, cardToken } from '../kernel/masking';
import { isExpired } from './card';
import type { PaymentMethodRow } from './payment-method-repo';

type PaymentMethod = components['schemas']['PaymentMethod'];

export interface PaymentMethodExtras {
  /** Adds `chargeable`: whether the method can be charged at this time (the app's clock). */
  chargeableAt?: Date;
  /** The customer's primary address, or null; given only when asked for. */
  billingAddress?: AddressRow | null;
}

export function isChargeable(row: PaymentMethodRow, now: Date): boolean {
  return row.type === 'ach' || !isExpired(row.card_exp_month!, row.card_exp_year!, now);
}

export function paymentMethodToApi(row: PaymentMethodRow, extras: PaymentMethodExtras = {}): PaymentMethod {
  return {
    id: row.id,
    type: row.type,
    card_token: cardToken(row),
    bank_account: bankAccount(row),
    is_primary: row.is_primary,
    ...(extras.chargeableAt ? { chargeable: isChargeable(row, extras.chargeableAt) } : {}),
    ...(extras.billingAddress !== undefined ? { billing_address: extras.billingAddress && addressToApi(extras.billingAddress) } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
