/**
 * One autopay run, like a plan's instalment: in one transaction the account family is locked
 * (the order every charge takes), the account's run of the month is claimed - a row keyed by
 * account and month, so two processes racing over one due month cannot both charge it - the
 * payment terms say whether the account takes a payment and what its balance is, and the
 * charge is made through the payments service, never above the balance. A decline e-mails the
 * customer a link to update the method (an agency message: opt-out and quiet hours apply).
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { gatewayFor } from '../gateway/gateways';
import { termsOf } from '../payment-terms/payment-terms';
import { money } from '../payment-terms/payment-terms';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import type { AutopayRow } from '../debt-accounts/account-autopay';
import { lockAccount } from '../payments/balances';
import { createCharge } from '../payments/create-charge';
import { sendToDebtor } from '../communications/outgoing';
import { openSessionIn } from '../customer-sessions/customer-session-service';
import { autopayRepo, type RunOutcome } from './autopay-repo';
import { monthOf, nextRunAfter } from './autopay-schedule';

interface Attempt {
  outcome: RunOutcome;
  chargeId: string | null;
  reason: string | null;
}

/** The charge of one run, in the run's transaction; a rule of the charge that refuses it is a failed run. */
async function charge(deps: AppDeps, trx: Knex.Transaction, tenant: Tenant, autopay: AutopayRow, amount: number, now: Date): Promise<Attempt> {
  const gatewayOn = gatewayFor(deps, tenant);
  if (!gatewayOn) return { outcome: 'failed', chargeId: null, reason: 'No payment gateway is configured for production; no money was moved.' };
  if (!autopay.payment_method_id) return { outcome: 'failed', chargeId: null, reason: 'The payment method of autopay was deleted.' };
  // The payments service reads the run's time (the tenant's `now` less the sandbox offset).
  const chargeDeps = { ...deps, db: trx, clock: () => new Date(now.getTime() - (tenant.clockOffsetMs ?? 0)) };
  try {
    const outcome = await createCharge(
      chargeDeps,
      gatewayOn,
      tenant,
      { amount, debt_account_id: autopay.debt_account_id, payment_method_id: autopay.payment_method_id },
      undefined,
      { source: 'autopay', payment_plan_id: null, payment_plan_charge_id: null },
    );
    return { outcome: outcome.declined ? 'failed' : 'charged', chargeId: outcome.charge.id, reason: outcome.declined?.message ?? null };
  } catch (error) {
    if (error instanceof ApiError) return { outcome: 'failed', chargeId: null, reason: error.message };
    throw error;
  }
}

async function tellDeclined(deps: AppDeps, trx: Knex.Transaction, tenant: Tenant, autopay: AutopayRow, month: string, amount: number, reason: string, now: Date): Promise<void> {
  await sendToDebtor(deps, trx, tenant, {
    customerId: autopay.customer_id,
    debtAccountId: autopay.debt_account_id,
    kind: 'autopay_failed',
    subject: 'Your automatic payment did not go through',
    dedupeKey: `autopay:${autopay.debt_account_id}:${month}`,
    now,
    body: async () => {
      const customer = (await customerRepo(trx, tenant).find(autopay.customer_id))!;
      const account = (await debtAccountRepo(trx, tenant).find(autopay.debt_account_id))!;
      const link = await openSessionIn(trx, deps, tenant, {
        customer,
        account,
        validUntilHours: 14 * 24,
        tags: [
          { name: 'utm_medium', value: 'email' },
          { name: 'utm_campaign', value: 'autopay_failed' },
        ],
      });
      return [
        `Hello ${customer.name},`,
        '',
        `Your automatic payment of ${money(amount)} could not be made: ${reason}`,
        `To update your payment method, open: ${link}`,
      ].join('\n');
    },
  });
}

/** Carries out the autopay of account `accountId` when due at `now` (its tenant's time); answers whether it did anything. */
export async function runAutopay(deps: AppDeps, tenant: Tenant, accountId: string, now: Date): Promise<boolean> {
  return deps.db.transaction(async (trx) => {
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
    const attempt: Attempt = terms.refusal
      ? { outcome: 'skipped', chargeId: null, reason: terms.refusal.message }
      : await charge(deps, trx, tenant, autopay, amount, now);
    await repo.recordRun(family.account.id, month, { outcome: attempt.outcome, charge_id: attempt.chargeId, reason: attempt.reason });
    await repo.afterRun(autopay.id, { next_run_at: next, last_run_at: now, last_outcome: attempt.outcome, last_error: attempt.reason });
    if (attempt.outcome === 'failed') await tellDeclined(deps, trx, tenant, autopay, month, amount, attempt.reason ?? 'the payment was declined', now);
    return true;
  });
}
