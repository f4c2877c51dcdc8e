/**
 * Recovery of charges left between the steps (a crash, a lost or late answer): a durable job on
 * pg-boss (queue `charge-recovery`), sent every minute by pg-boss's cron and once at every
 * start, finds the charges `processing` for longer than CHARGE_RECOVERY_AFTER_SECONDS, asks the
 * gateway by the charge's key what became of each, and records that answer exactly once
 * (charge-steps.ts's `recordAnswer` does nothing to a charge no longer `processing`). A charge
 * the gateway never received is failed and its reservation released; the gateway refuses its
 * key from then on, so a request still on its way can never take the money afterwards. Any
 * number of processes may run it at once.
 */
import { countRecoveries } from '../observability/metrics';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { QUEUES } from '../jobs/queue';
import { nowFor, withClock } from '../kernel/clock';
import { CHARGES, chargeRepo } from '../charge-store/charge-repo';
import { GatewayRateLimited, GatewayUnanswered } from '../gateway/gateway';
import { gatewayFor } from '../gateway/gateways';
import type { PaymentDeps } from './payment-deps';
import { recordAnswer } from './charge-steps';

const BATCH = 100;
/** Gateways asked at once by one process's recovery. */
const AT_ONCE = 8;

interface Stuck {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
}

/**
 * Finishes one `processing` charge from the gateway's own record of it (by the processor's id of
 * it when one was recorded, else by our key); answers whether it finished it. A gateway that does
 * not answer, is rate limited or cannot tell yet leaves it `processing` for the next round.
 */
export async function recoverCharge(deps: PaymentDeps, tenant: Tenant, chargeId: string): Promise<boolean> {
  const charge = await chargeRepo(deps.db, tenant).find(chargeId);
  if (!charge || charge.status !== 'processing') return false;
  const gateway = await gatewayFor(deps, tenant, charge.gateway);
  // The charge's gateway is no longer configured: ask again later rather than guess.
  if (!gateway) return false;
  let answer;
  try {
    answer = await gateway.find(chargeId, { reference: charge.gateway_reference, reservedAt: charge.created_at, customerId: charge.customer_id });
  } catch (error) {
    if (error instanceof GatewayUnanswered || error instanceof GatewayRateLimited) return false;
    throw error;
  }
  const now = nowFor(deps.clock, await withClock(deps.db, tenant));
  // "Never received" stands only while no processor id was recorded since it was asked.
  const outcome = await recordAnswer(deps, tenant, chargeId, answer ?? 'never_received', now, undefined, answer ? undefined : charge.gateway_reference);
  return outcome !== undefined && outcome.charge.status !== 'processing';
}

/** Every charge `processing` for longer than `afterSeconds`, oldest first; answers how many it finished. */
export async function recoverCharges(deps: PaymentDeps, afterSeconds = deps.config.chargeRecoveryAfterSeconds): Promise<number> {
  let done = 0;
  const seen = new Set<string>();
  for (;;) {
    const stuck: Stuck[] = await deps
      .db(CHARGES)
      .where({ status: 'processing' })
      .whereRaw(`updated_at <= now() - ? * interval '1 second'`, [afterSeconds])
      .whereNotIn('id', [...seen])
      .orderBy('updated_at')
      .limit(BATCH)
      .select('id', 'organization_id', 'environment');
    if (stuck.length === 0) {
      countRecoveries(done);
      return done;
    }
    const queue = [...stuck];
    await Promise.all(
      Array.from({ length: Math.min(AT_ONCE, queue.length) }, async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          seen.add(next.id);
          const tenant: Tenant = { organizationId: next.organization_id, environment: next.environment, tokenHash: '' };
          // One charge the gateway cannot answer for (a refusal, an error of ours) is told and left
          // `processing` for the next round; the others of the round are still asked.
          try {
            if (await recoverCharge(deps, tenant, next.id)) done += 1;
          } catch (error) {
            deps.logger?.warn({ err: error, chargeId: next.id }, 'a charge left processing could not be recovered this round');
          }
        }
      }),
    );
  }
}

export async function startChargeRecovery(deps: AppDeps): Promise<void> {
  const { boss, logger } = deps;
  await boss.work(QUEUES.chargeRecovery, { pollingIntervalSeconds: 2 }, async () => {
    const done = await recoverCharges(deps);
    if (done > 0) logger.info({ done }, 'charges left processing were finished');
  });
  await boss.schedule(QUEUES.chargeRecovery, '* * * * *', {}, { tz: 'UTC' });
  await boss.send(QUEUES.chargeRecovery, {});
}
