/**
 * The rules of a plan's terms that the document states but a schema cannot check: the account
 * it pays, the payment method it charges, and the bounds of its start date and amount.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../http/auth';
import { scoped } from '../db/tenant';
import type { DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { PAYMENT_METHOD_COLUMNS, PAYMENT_METHODS, type PaymentMethodRow } from '../payment-methods/payment-method-repo';
import { addDays, instalmentCount, MAX_INSTALMENTS } from './schedule';

export type FieldErrors = Record<string, string[]>;

/** How far ahead a plan may start. */
export const MAX_START_DAYS = 365;

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

/** Why `account` cannot have a plan, if it cannot. */
export function accountProblem(account: DebtAccountRow | undefined): string | undefined {
  if (!account) return 'does not exist';
  if (account.parent_id) return 'is a child account: a plan pays its parent';
  if (account.status !== 'active') return `must be an active account (it is ${account.status})`;
  if (Number(account.current_balance) <= 0) return 'has no balance left to pay';
  if (account.billing_type && !account.billing_type.includes('payment-plan')) return 'does not offer payment-plan in its billing_type';
  return undefined;
}

export function checkStartDate(errors: FieldErrors, startDate: string, today: string): void {
  if (startDate < today) add(errors, 'start_date', 'must be today or later');
  else if (startDate > addDays(today, MAX_START_DAYS)) add(errors, 'start_date', `must be at most ${MAX_START_DAYS} days after today`);
}

export function checkAmount(errors: FieldErrors, amount: number, account: DebtAccountRow): void {
  const balance = Number(account.current_balance);
  const minimum = account.rules?.min_payment_amount;
  if (amount > balance) add(errors, 'amount', `must be at most the account's current balance (${balance})`);
  else if (minimum !== undefined && amount < minimum && amount < balance) add(errors, 'amount', `must be at least the account's minimum payment (${minimum})`);
  else if (instalmentCount(balance, amount) > MAX_INSTALMENTS) {
    add(errors, 'amount', `must cover the current balance (${balance}) in at most ${MAX_INSTALMENTS} instalments: at least ${Math.ceil(balance / MAX_INSTALMENTS)}`);
  }
}

/** The saved method `id`, when it is one of the customer's that can be charged now. */
export async function checkPaymentMethod(db: Knex, tenant: Tenant, errors: FieldErrors, id: string, customerId: string, now: Date): Promise<void> {
  const method = (await scoped(db, PAYMENT_METHODS, tenant).where({ id, customer_id: customerId }).first(PAYMENT_METHOD_COLUMNS)) as PaymentMethodRow | undefined;
  if (!method) add(errors, 'payment_method_id', "is not a payment method of the account's customer");
  else if (!isChargeable(method, now)) add(errors, 'payment_method_id', 'is a card that has expired');
}
