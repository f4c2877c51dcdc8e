/**
 * Turning autopay on and off. The customer turns it on in the Portal for one of their accounts
 * with a saved method; the payment terms decide whether the account takes payments and whether
 * the amount chosen is one it may be paid (the whole balance, or a custom amount of at least
 * the minimum when the account offers partial payments). The organization stops it through the
 * API; the customer in the Portal.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { isChargeable } from '../payment-methods/payment-method-mapper';
import { paymentMethodRepo } from '../payment-methods/payment-method-repo';
import { termsOf } from '../payment-terms/payment-terms';
import { amountErrors } from '../payment-terms/payment-intent';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { autopayToApi } from '../debt-accounts/account-autopay';
import { lockAccount } from '../payments/balances';
import { autopayRepo } from './autopay-repo';
import { FIRST_DAY, LAST_DAY, nextRunAfter } from './autopay-schedule';

export interface AutopayChoice {
  amount_type: 'full_balance' | 'custom';
  /** Cents, for `custom`. */
  amount: number | null;
  day_of_month: number;
  payment_method_id: string;
}

/** Who turns it on: the customer of a Portal visit, at their tenant's time. */
export interface AutopayVisitor {
  customerId: string;
  now: Date;
}

const add = (errors: FieldErrors, field: string, message: string) => {
  (errors[field] ??= []).push(message);
};

export function autopayService(deps: Pick<AppDeps, 'db'>) {
  const { db } = deps;
  return {
    /** Turns on (or changes) the account's autopay; field errors as a 422 change nothing. */
    async turnOn(
      tenant: Tenant,
      visitor: AutopayVisitor,
      accountId: string,
      choice: AutopayChoice,
      /** What must commit with it (the Portal's tracking event). */
      within?: (trx: Knex.Transaction, accountId: string) => Promise<void>,
    ): Promise<components['schemas']['Autopay']> {
      return db.transaction(async (trx) => {
        const family = await lockAccount(trx, tenant, accountId);
        if (!family || family.account.customer_id !== visitor.customerId) throw ApiError.notFound('Debt account');
        const errors: FieldErrors = {};
        const method = await paymentMethodRepo(trx, tenant).find(choice.payment_method_id);
        if (!method || method.customer_id !== visitor.customerId || !method.gateway_token || !isChargeable(method, visitor.now)) {
          add(errors, 'payment_method_id', 'choose one of your saved payment methods');
        }
        if (!Number.isInteger(choice.day_of_month) || choice.day_of_month < FIRST_DAY || choice.day_of_month > LAST_DAY) {
          add(errors, 'day_of_month', `must be a day from ${FIRST_DAY} to ${LAST_DAY}`);
        }
        const terms = termsOf(family.account);
        if (choice.amount_type === 'custom' && (choice.amount === null || !Number.isInteger(choice.amount) || choice.amount < 1)) add(errors, 'amount', 'enter an amount');
        else amountErrors(terms, { amount: choice.amount_type === 'custom' ? choice.amount! : terms.balance }, errors);
        if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);

        const row = await autopayRepo(trx, tenant).save(family.account.id, {
          customer_id: visitor.customerId,
          payment_method_id: method!.id,
          amount_type: choice.amount_type,
          amount: choice.amount_type === 'custom' ? choice.amount : null,
          day_of_month: choice.day_of_month,
          next_run_at: nextRunAfter(choice.day_of_month, visitor.now),
        });
        await within?.(trx, family.account.id);
        return autopayToApi(row);
      });
    },

    /** Stops the account's autopay (`{id|external_id}`); 404 when there is no such account or no autopay. */
    async stop(tenant: Tenant, accountKey: string, customerId?: string): Promise<void> {
      const account = await debtAccountRepo(db, tenant).find(accountKey);
      if (!account || (customerId && account.customer_id !== customerId)) throw ApiError.notFound('Debt account');
      if (!(await autopayRepo(db, tenant).remove(account.id))) throw ApiError.notFound('Autopay');
    },
  };
}
