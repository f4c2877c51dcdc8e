/**
 * What we ask the processors ourselves, on a schedule, for what their webhooks do not (or did
 * not) tell: two durable jobs on pg-boss, each sent by pg-boss's cron (one job per tick for the
 * whole deployment) and run for every organization and environment configured for a processor
 * that has the report, one account after the other (one that fails is told and the others
 * still read; it is read again at the next tick).
 *
 * - `processor-late-arrivals`, every 5 minutes (Authorize.net): the late-arrival sweep
 *   (gateway/authorize-net/authorize-net-sweep.ts) over the transactions submitted in the last
 *   24 hours. Authorize.net has no idempotency key, so a charge it received after we gave up on
 *   it (recorded `failed`, its reservation released) can still take money: each such
 *   transaction is given back (voided, or refunded once settled), and one whose charge is still
 *   `processing` is recorded through recovery (`recoverCharge`). Never taken and unrecorded
 *   for longer than the sweep's period.
 * - `processor-later-notices`, daily: the processor's reports of the last 120 days read as
 *   notices (`laterNotices`: Authorize.net's eCheck returns and chargebacks, which it sends no
 *   webhook for), each applied as a webhook's would be (notice-service.ts `applyNotice`:
 *   matched to our charge by the processor's reference, once by its id, and each flow's own
 *   state checks make a return or chargeback already applied from a webhook change nothing).
 *   120 days covers the card networks' chargeback window and ACH's late returns (R10 within 60
 *   days of settlement).
 */
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { QUEUES } from '../jobs/queue';
import { scoped } from '../db/tenant';
import { gatewayFor } from '../gateway/gateways';
import { processorsOf, type Processor } from '../gateway/processor-read';
import type { PaymentGateway } from '../gateway/gateway';
import type { ProcessorName } from '../gateway/processor-repo';
import type { AuthorizeNetGateway } from '../gateway/authorize-net/authorize-net-gateway';
import { sweepLateArrivals, type SweptCharge } from '../gateway/authorize-net/authorize-net-sweep';
import type { PaymentDeps } from '../payments/payment-deps';
import { recoverCharge } from '../payments/charge-recovery';
import { applyNotice } from './notice-service';

/** How far back the late-arrival sweep reads (a transaction submitted later than its charge gave up). */
export const LATE_ARRIVALS_SPAN_MS = 24 * 3_600_000;
/** How far back the daily read of the processors' reports goes. */
export const LATER_NOTICES_SPAN_MS = 120 * 86_400_000;
/** The processors whose adapter has each report. */
const SWEPT: ProcessorName[] = ['authorize_net'];
const REPORTING: ProcessorName[] = ['authorize_net'];

type Reports = Partial<Pick<AuthorizeNetGateway, 'arrivalsSince' | 'takeBack' | 'laterNotices'>>;

const tenantOf = (processor: Processor): Tenant => ({ organizationId: processor.organizationId, environment: processor.environment, tokenHash: '' });

/** The processor's adapter (paced as any of its calls), for a configuration still in force. */
async function reportsOf(deps: PaymentDeps, processor: Processor): Promise<(PaymentGateway & Reports) | undefined> {
  const gateway = await gatewayFor(deps, tenantOf(processor), processor.name);
  return gateway as (PaymentGateway & Reports) | undefined;
}

/** Each configuration of `names`, one after the other; one that fails is told and does not stop the others. */
async function eachProcessor<T>(deps: PaymentDeps, names: ProcessorName[], what: string, read: (processor: Processor) => Promise<T>): Promise<T[]> {
  const done: T[] = [];
  for (const processor of await processorsOf(deps, names)) {
    try {
      done.push(await read(processor));
    } catch (error) {
      deps.logger?.warn({ err: error, processorId: processor.id, organizationId: processor.organizationId }, `${what} could not be read; read again at the next run`);
    }
  }
  return done;
}

/** One round of the late-arrival sweep for every configuration that has it; answers what each did. */
export async function sweepProcessors(deps: PaymentDeps, now = new Date()) {
  return eachProcessor(deps, SWEPT, "the processor's late arrivals", async (processor) => {
    const gateway = await reportsOf(deps, processor);
    if (!gateway?.arrivalsSince || !gateway.takeBack) return { processorId: processor.id, recovered: [], takenBack: [] };
    const tenant = tenantOf(processor);
    const swept = await sweepLateArrivals(
      {
        gateway: { arrivalsSince: gateway.arrivalsSince, takeBack: gateway.takeBack },
        chargesSince: async (since): Promise<SweptCharge[]> =>
          (
            await scoped(deps.db, 'charges', tenant)
              .where({ gateway: processor.name })
              .where('created_at', '>=', since)
              .select('id', 'status', 'gateway_reference')
          ).map((row: { id: string; status: string; gateway_reference: string | null }) => ({ id: row.id, status: row.status, gatewayReference: row.gateway_reference })),
        recover: (chargeId) => recoverCharge(deps, tenant, chargeId),
      },
      new Date(now.getTime() - LATE_ARRIVALS_SPAN_MS),
    );
    if (swept.takenBack.length > 0) deps.logger?.warn({ processorId: processor.id, takenBack: swept.takenBack }, 'transactions that arrived after their charge was given up on were given back');
    return { processorId: processor.id, ...swept };
  });
}

/** The daily read of every configuration's reports as notices, each applied once; answers how many were new. */
export async function readLaterNotices(deps: PaymentDeps, now = new Date()): Promise<number> {
  const applied = await eachProcessor(deps, REPORTING, "the processor's reports", async (processor) => {
    const gateway = await reportsOf(deps, processor);
    if (!gateway?.laterNotices) return 0;
    let fresh = 0;
    for (const notice of await gateway.laterNotices(new Date(now.getTime() - LATER_NOTICES_SPAN_MS))) if (await applyNotice(deps, processor, notice)) fresh += 1;
    return fresh;
  });
  return applied.reduce((a, b) => a + b, 0);
}

export async function startProcessorReads(deps: AppDeps): Promise<void> {
  const { boss, logger } = deps;
  await boss.work(QUEUES.processorLateArrivals, { pollingIntervalSeconds: 5 }, async () => {
    const swept = await sweepProcessors(deps);
    const recovered = swept.reduce((n, each) => n + each.recovered.length, 0);
    if (recovered > 0) logger.info({ recovered }, 'charges found at the processor after all were recorded');
  });
  await boss.schedule(QUEUES.processorLateArrivals, '*/5 * * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.processorLaterNotices, { pollingIntervalSeconds: 30 }, async () => {
    const applied = await readLaterNotices(deps);
    if (applied > 0) logger.info({ applied }, "returns and chargebacks read from the processors' reports were applied");
  });
  // Once a day, at an hour of little traffic in the US.
  await boss.schedule(QUEUES.processorLaterNotices, '17 9 * * *', {}, { tz: 'UTC' });
}
