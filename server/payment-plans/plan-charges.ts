/**
 * The due-work job's ports into payments: an instalment becomes a charge through the payments
 * service (source `payment_plan`, naming the plan and the instalment), reserved on the runner's
 * transaction, so the attempt row and the reservation commit or roll back together; the gateway
 * is asked after that commit;
 * a due scheduled charge is carried out, and (on a moved sandbox clock) an ACH debit settled,
 * by the payments service, each reading the app's time of the item's due time.
 */
import type { AppDeps } from '../deps';
import { ApiError } from '../kernel/errors';
import { gatewayFor, whyNoGateway } from '../gateway/gateways';
import type { Knex } from 'knex';
import type { LockedFamily } from '../payments/balances';
import { lockFamilies } from '../payments/family-locks';
import { reserveAllOn } from '../payments/reserve-batch';
import type { PaymentGateway } from '../gateway/gateway';
import { askAndRecord, recordAnswers, type Answer, type AnswerOf } from '../payments/charge-steps';
import type { ChargeOutcome } from '../payments/charge-outcome';
import { batcher } from '../kernel/batcher';
import { dueScheduledCharges, dueScheduledChargesOf, runScheduledCharge } from '../payments/scheduled-charges';
import { dueSettlementsOf, settleAch } from '../payments/ach-settlement';
import type { Tenant } from '../kernel/tenant';
import { dueBatchFor, type DueWorkPorts } from './due-work';
import { messageDueSources } from '../communications/due-messages';
import type { ChargeRequest, DueRef } from './plan-runner';
import { processorRooms } from './processor-room';

/** The app's clock as it reads when the tenant's clock shows `now`. */
const atTenantTime = (deps: AppDeps, tenant: Tenant, now: Date): AppDeps => ({ ...deps, clock: () => new Date(now.getTime() - (tenant.clockOffsetMs ?? 0)) });

/** Which gateway serves a tenant: the configured one (`gatewayFor`), or another (bench:scheduler's processor at its pace). */
export type GatewayOf = (deps: AppDeps, tenant: Tenant) => PaymentGateway | undefined | Promise<PaymentGateway | undefined>;

export function planPorts(deps: AppDeps, gatewayOf: GatewayOf = gatewayFor): DueWorkPorts {
  // The families the runner locked on a transaction (a batch locks many), handed to the
  // reservation on that same transaction (locked once, not twice).
  const lockedOn = new WeakMap<Knex.Transaction, Map<string, LockedFamily>>();
  // The answers of this process's instalments, recorded in batches (group commit: those that
  // arrive while a batch is being recorded go together in the next), at most half the flow in
  // one (due-work.ts dueBatchFor), so that two record at once.
  const answers = batcher<AnswerOf, ChargeOutcome | undefined>((entries) => recordAnswers(deps, entries), { max: dueBatchFor(deps.config.dueWorkChargesInFlight) });
  return {
    scheduledCharge: async (tenant, id, now) => runScheduledCharge(atTenantTime(deps, tenant, now), await gatewayOf(deps, tenant), tenant, id, now),
    settlement: (tenant, id, now) => settleAch(atTenantTime(deps, tenant, now), { organizationId: tenant.organizationId, environment: tenant.environment, chargeId: id }),
    dueScheduledCharges: (realNow) => dueScheduledCharges(deps.db, realNow),
    dueScheduledChargesOf: (tenant, upTo) => dueScheduledChargesOf(deps.db, tenant, upTo, 1) as Promise<DueRef[]>,
    dueSettlementsOf: (tenant, upTo) => dueSettlementsOf(deps.db, tenant, upTo, 1),
    others: messageDueSources(deps),
    // Instalments and scheduled charges wait for their processor's room (its pace) before they are reserved.
    room: processorRooms((tenant) => gatewayOf(deps, tenant)),
    lockAccounts: async (trx, wanted) => {
      const families = await lockFamilies(trx, wanted);
      // A family locked again on the transaction (read again after a reservation) replaces its first read.
      const known = lockedOn.get(trx);
      if (known) for (const [id, family] of families) known.set(id, family);
      else lockedOn.set(trx, families);
      return new Map([...families].map(([id, family]) => [id, family.account]));
    },
    charge: async (trx, requests) => {
      const outcomes: Awaited<ReturnType<DueWorkPorts['charge']>> = [];
      const toReserve: { index: number; gateway: PaymentGateway; request: ChargeRequest }[] = [];
      for (const request of requests) {
        const gateway = await gatewayOf(deps, request.tenant);
        if (!gateway) outcomes.push({ chargeId: null, paid: false, error: (await whyNoGateway(deps, request.tenant))!, errorCode: 'processor_not_configured' });
        else if (!request.plan.payment_method_id) outcomes.push({ chargeId: null, paid: false, error: 'The plan has no payment method (it was deleted).', errorCode: 'no_payment_method' });
        else {
          toReserve.push({ index: outcomes.length, gateway, request });
          outcomes.push({ chargeId: null, paid: false });
        }
      }
      // The charges reserved together, each checked by the payments' rules (reserveOn's, one path).
      const reserved = await reserveAllOn(
        deps,
        trx,
        toReserve.map(({ gateway, request: { tenant, plan, instalment, amount, now } }) => ({
          tenant,
          gateway,
          now,
          body: { amount, debt_account_id: plan.debt_account_id, payment_method_id: plan.payment_method_id! },
          origin: { source: 'payment_plan' as const, payment_plan_id: plan.id, payment_plan_charge_id: instalment.id },
          family: lockedOn.get(trx)?.get(plan.debt_account_id),
        })),
      );
      toReserve.forEach(({ index, gateway, request: { tenant, now } }, at) => {
        const made = reserved[at]!;
        // A rule of the charge refused it (an expired card, a method without a token): a failed attempt.
        if (made instanceof ApiError) {
          outcomes[index] = { chargeId: null, paid: false, error: made.message, errorCode: made.errorCode };
          return;
        }
        const { charge, token } = made;
        // The payments service reads the instalment's time (`now` on the tenant's clock is the
        // app's clock plus the sandbox offset).
        const chargeDeps = atTenantTime(deps, tenant, now);
        // The instalment's attempt is finished by the answer's `charge.finished` (instalment-outcome.ts).
        const record = (answer: Answer) => answers.add({ tenant, chargeId: charge.id, answer, now });
        outcomes[index] = { chargeId: charge.id, finish: () => askAndRecord(chargeDeps, gateway, tenant, charge, token, { now, record }) };
      });
      return outcomes;
    },
  };
}
