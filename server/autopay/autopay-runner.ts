/**
 * One autopay run, like a plan's instalment, in steps around the gateway: in one short
 * transaction the account family is locked (the order every charge takes), the account's run
 * of the month is claimed - a row keyed by account and month, so two processes racing over one
 * due month cannot both charge it - the payment terms say whether the account takes a payment
 * and what its balance is, and the charge is reserved through the payments service (never above
 * the balance) and the run recorded `processing` with its charge; that commits. The gateway is
 * then asked holding no transaction, connection or lock, and its answer, recorded by the
 * payments (or by their recovery after a crash), finishes the run through `charge.finished`
 * (autopay-outcome.ts): charged, or failed with an e-mail to the customer.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { gatewayFor } from '../gateway/gateways';
import type { PaymentGateway } from '../gateway/gateway';
import { termsOf } from '../payment-terms/payment-terms';
import type { AutopayRow } from '../debt-accounts/account-autopay';
import { lockAccount, type LockedFamily } from '../payments/balances';
import { reserveOn } from '../payments/create-charge';
import { askAndRecord } from '../payments/charge-steps';
import { moneyWrites } from '../payments/write-slots';
import { autopayRepo } from './autopay-repo';
import { monthOf, nextRunAfter } from './autopay-schedule';
import { tellDeclined } from './autopay-outcome';

/** A run's charge reserved (the gateway to be asked after the commit), or why none could be. */
type Reserved = { chargeId: string; finish: () => Promise<unknown> } | { failed: string };

/** Step 1 of the run's charge, on the run's transaction; a rule of the charge that refuses it is a failed run. */
async function reserveCharge(deps: AppDeps, trx: Knex.Transaction, tenant: Tenant, family: LockedFamily, autopay: AutopayRow, amount: number, now: Date): Promise<Reserved> {
  const gateway: PaymentGateway | undefined = await gatewayFor(deps, tenant);
  if (!gateway) return { failed: 'No payment gateway is configured for production; no money was moved.' };
  if (!autopay.payment_method_id) return { failed: 'The payment method of autopay was deleted.' };
  // The payments service reads the run's time (the tenant's `now` less the sandbox offset).
  const chargeDeps = { ...deps, clock: () => new Date(now.getTime() - (tenant.clockOffsetMs ?? 0)) };
  try {
    const { charge, token } = await reserveOn(
      chargeDeps,
      trx,
      tenant,
      gateway,
      { amount, debt_account_id: autopay.debt_account_id, payment_method_id: autopay.payment_method_id },
      { source: 'autopay', payment_plan_id: null, payment_plan_charge_id: null },
      family,
    );
    return { chargeId: charge.id, finish: () => askAndRecord(chargeDeps, gateway, tenant, charge, token, { now }) };
  } catch (error) {
    if (error instanceof ApiError) return { failed: error.message };
    throw error;
  }
}

/** Carries out the autopay of account `accountId` when due at `now` (its tenant's time); answers whether it did anything. */
export async function runAutopay(deps: AppDeps, tenant: Tenant, accountId: string, now: Date): Promise<boolean> {
  const started = await moneyWrites(deps.db, () => deps.db.transaction(async (trx): Promise<boolean | { finish: () => Promise<unknown> }> => {
    const family = await lockAccount(trx, tenant, accountId);
    const repo = autopayRepo(trx, tenant);
    const autopay = family && (await repo.find(family.account.id, { forUpdate: true }));
    if (!family || !autopay || autopay.next_run_at.getTime() > now.getTime()) return false;
    const month = monthOf(autopay.next_run_at);
    // A month missed while the service was down runs once, then the next run is the next day after now.
    const next = nextRunAfter(autopay.day_of_month, now);
    if (!(await repo.claimMonth(family.account.id, month, 'skipped'))) {
      await repo.afterRun(autopay.id, { next_run_at: next });
      return true;
    }
    const terms = termsOf(family.account);
    const amount = Math.min(autopay.amount_type === 'custom' ? Number(autopay.amount) : terms.balance, terms.balance);
    if (terms.refusal) {
      await repo.recordRun(family.account.id, month, { outcome: 'skipped', charge_id: null, reason: terms.refusal.message });
      await repo.afterRun(autopay.id, { next_run_at: next, last_run_at: now, last_outcome: 'skipped', last_error: terms.refusal.message });
      return true;
    }
    const reserved = await reserveCharge(deps, trx, tenant, family, autopay, amount, now);
    if ('failed' in reserved) {
      await repo.recordRun(family.account.id, month, { outcome: 'failed', charge_id: null, reason: reserved.failed });
      await repo.afterRun(autopay.id, { next_run_at: next, last_run_at: now, last_outcome: 'failed', last_error: reserved.failed });
      await tellDeclined(deps, trx, tenant, { customerId: autopay.customer_id, accountId: autopay.debt_account_id, month, amount, reason: reserved.failed }, now);
      return true;
    }
    // In flight: the answer's `charge.finished` makes it charged or failed (autopay-outcome.ts).
    await repo.recordRun(family.account.id, month, { outcome: 'processing', charge_id: reserved.chargeId, reason: null });
    await repo.afterRun(autopay.id, { next_run_at: next, last_run_at: now, last_outcome: 'processing', last_error: null });
    return { finish: reserved.finish };
  }));
  if (typeof started === 'boolean') return started;
  await started.finish();
  return true;
}
