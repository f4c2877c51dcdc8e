/**
 * What the gateway answered for a charge, recorded, on the caller's transaction with the
 * account family locked: the charge row (a new one, or a scheduled one carried out), its
 * transactions and allocations, the balances, the events, the ACH settlement job and the
 * receipt. One path for a charge made now and a scheduled charge made on its day, so both read
 * the same to the user.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { enqueueIn, QUEUES } from '../jobs/queue';
import type { ChargeOutcome as GatewayAnswer } from '../gateway/gateway';
import { announce } from '../events/listeners';
import { moveBalances, spread, type Family } from './balances';
import { chargeRepo, type ChargeRow } from '../charge-store/charge-repo';
import type { PaymentDeps } from './payment-deps';
import { chargeMade } from './payment-events';
import { settlementJob } from './ach-settlement';
import { sendToDebtor, type Message } from '../communications/outgoing';

export interface ChargeOutcome {
  charge: ChargeRow;
  /** Set when the gateway declined: the 400 to answer once the failed charge is committed. */
  declined?: ApiError;
}

/** The columns the gateway's answer decides. */
export type AnsweredValues = Pick<ChargeRow, 'gateway_reference' | 'status' | 'error' | 'error_code' | 'settled_at' | 'settles_at'>;

export async function recordCharge(
  deps: PaymentDeps,
  trx: Knex.Transaction,
  tenant: Tenant,
  request: {
    family: Family;
    amount: number;
    answer: GatewayAnswer;
    /** The tenant's time (the sandbox clock in a sandbox). */
    now: Date;
    /** Writes the charge row: inserts a new one, or updates the scheduled one. */
    write: (values: AnsweredValues) => Promise<ChargeRow>;
    /** A plan's own instalment: the plan runner completes its plan itself. */
    ofPlan: boolean;
  },
): Promise<ChargeOutcome> {
  const { family, amount, answer, now } = request;
  const failed = answer.status === 'failed';
  const charge = await request.write({
    gateway_reference: answer.reference,
    status: failed ? 'failed' : answer.status === 'pending' ? 'pending' : 'succeeded',
    error: failed ? answer.message : null,
    error_code: failed ? answer.code : null,
    settled_at: answer.status === 'succeeded' ? new Date() : null,
    // When to ask for the outcome on the tenant's clock: moving a sandbox clock past it settles the debit.
    settles_at: answer.status === 'pending' ? new Date(now.getTime() + answer.checkAfterSeconds * 1000) : null,
  });
  const charges = chargeRepo(trx, tenant);

  if (failed) {
    await charges.insertTransactions(charge.id, [{ debt_account_id: family.account.id, kind: 'charge', status: 'failed', amount: 0, gateway_reference: answer.reference }]);
    await chargeMade(deps.events, trx, tenant, charge, []);
    await announce(trx, deps.events, tenant, 'charge.declined', { charge, now });
    return { charge, declined: new ApiError(answer.code, answer.message) };
  }

  const parts = spread(family, amount);
  await charges.insertPaid(charge.id, parts, { kind: 'charge', status: charge.status === 'pending' ? 'pending' : 'succeeded', gateway_reference: answer.reference });
  const moved = await moveBalances(trx, tenant, parts.map((part) => ({ debt_account_id: part.debt_account_id, delta: -part.amount })));
  await chargeMade(deps.events, trx, tenant, charge, moved);
  if (!request.ofPlan) await announce(trx, deps.events, tenant, 'charge.paid-accounts', { accountIds: moved, now, chargeId: charge.id });
  if (answer.status === 'pending') await enqueueIn(deps.boss, trx, QUEUES.achSettlement, settlementJob(tenant, charge.id), { startAfter: answer.checkAfterSeconds });
  if (charge.send_email) await sendToDebtor(deps, trx, tenant, receipt(charge, now));
  return { charge };
}

/** A receipt is always a message the debtor asked for (whoever made the payment): sent at once, also after an opt-out. */
function receipt(charge: ChargeRow, now: Date): Message {
  const amount = (Number(charge.amount) / 100).toFixed(2);
  const method = charge.card ? `card ending ${charge.card.card_number}` : `bank account ${charge.bank_account!.account_number}`;
  const state = charge.status === 'pending' ? 'is being processed' : 'was received';
  return {
    customerId: charge.customer_id,
    debtAccountId: charge.debt_account_id,
    kind: 'receipt',
    to: charge.email!,
    now,
    subject: `Payment receipt ${charge.reference_number}`,
    body: `Your payment of $${amount} from your ${method} ${state}. Reference: ${charge.reference_number}.`,
  };
}
