/**
 * The end of an autopay run: its charge's answer was recorded (by the run that made it, by its
 * late answer, or by charge-recovery after a crash or a lost answer), in the transaction that
 * recorded it, which holds the account family's lock (the autopay is locked after it, the
 * runner's order). The run in flight (`processing`, keyed by its charge) becomes `charged` or
 * `failed`, the account's autopay shows it, and a decline e-mails the customer a link to
 * update the method - once: the run is finished only while it is `processing`.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { EventRecorder } from '../events/events';
import { listen, type Happenings, type Listener } from '../events/listeners';
import type { Tenant } from '../kernel/tenant';
import { withClock } from '../kernel/clock';
import { customerRepo } from '../customer-store/customer-repo';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { sendToDebtor } from '../communications/outgoing';
import { openSessionIn } from '../customer-sessions/customer-session-service';
import { autopayRepo } from './autopay-repo';

/** What the decline's e-mail needs: the queue, the Portal's address and the secrets. */
export type OutcomeDeps = Pick<AppDeps, 'db' | 'boss' | 'config' | 'secrets' | 'clock'>;

/** The account `accountId` of customer `customerId`: its run of `month` was declined (`reason`). */
export async function tellDeclined(
  deps: OutcomeDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  run: { customerId: string; accountId: string; month: string; amount: number; reason: string },
  now: Date,
): Promise<void> {
  await sendToDebtor(deps, trx, tenant, {
    customerId: run.customerId,
    debtAccountId: run.accountId,
    kind: 'autopay_failed',
    subject: 'Your automatic payment did not go through',
    dedupeKey: `autopay:${run.accountId}:${run.month}`,
    now,
    body: async () => {
      const customer = (await customerRepo(trx, tenant).find(run.customerId))!;
      const account = (await debtAccountRepo(trx, tenant).find(run.accountId))!;
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
        // No amount: the message needs none, and a mailbox may be read by someone else (12 CFR 1006.6(d)).
        `Your automatic payment could not be made: ${run.reason}`,
        `To update your payment method, open: ${link}`,
      ].join('\n');
    },
  });
}

/** Finishes the autopay run waiting for `charge`, if one is; nothing for any other charge. */
export async function finishAutopayRun(deps: OutcomeDeps, trx: Knex.Transaction, tenant: Tenant, { charge, declined, now }: Happenings['charge.finished']): Promise<void> {
  // Only an autopay run's charge (autopay-runner.ts makes it with source `autopay`): nothing to look up for any other.
  if (charge.source !== 'autopay') return;
  const paid = charge.status !== 'failed';
  const reason = paid ? null : (declined?.message ?? charge.error ?? 'the payment was declined');
  const repo = autopayRepo(trx, tenant);
  const run = await repo.finishRun(charge.id, { outcome: paid ? 'charged' : 'failed', reason });
  if (!run) return;
  await repo.afterAnswer(run.debt_account_id, { last_outcome: paid ? 'charged' : 'failed', last_error: reason });
  if (paid) return;
  const account = await debtAccountRepo(trx, tenant).find(run.debt_account_id);
  if (!account) return;
  // The session link reads the app's clock as it reads when the tenant's clock shows `now`.
  const clocked = await withClock(trx, tenant);
  const at = { ...deps, clock: () => new Date(now.getTime() - (clocked.clockOffsetMs ?? 0)) };
  await tellDeclined(at, trx, clocked, { customerId: account.customer_id, accountId: account.id, month: run.month, amount: Number(charge.amount), reason: reason! }, now);
}

/** The process's dependencies, for the one listener below (listeners are kept once per process). */
let registered: OutcomeDeps | undefined;

const finished: Listener<'charge.finished'> = (trx: Knex.Transaction, _events: EventRecorder, tenant: Tenant, what) => finishAutopayRun(registered!, trx, tenant, what);

/** Registers autopay's listener (once, however often it is called): the process's `deps` serve the decline's e-mail. */
export function listenToAutopayCharges(deps: OutcomeDeps): void {
  registered = deps;
  listen('charge.finished', finished);
}
