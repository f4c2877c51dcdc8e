/**
 * The payment method a plan charges: one of the account's customer's, chargeable now. The
 * account's terms (can it have a plan, the start date, the amount) are payment-terms'.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { PAYMENT_METHOD_COLUMNS, PAYMENT_METHODS, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import type { FieldErrors } from '../kernel/errors';

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

/** The saved method `id`, when it is one of the customer's that can be charged now. */
export async function checkPaymentMethod(db: Knex, tenant: Tenant, errors: FieldErrors, id: string, customerId: string, now: Date): Promise<void> {
  const method = (await scoped(db, PAYMENT_METHODS, tenant).where({ id, customer_id: customerId }).first(PAYMENT_METHOD_COLUMNS)) as PaymentMethodRow | undefined;
  if (!method) add(errors, 'payment_method_id', "is not a payment method of the account's customer");
  else if (!isChargeable(method, now)) add(errors, 'payment_method_id', 'is a card that has expired');
}
