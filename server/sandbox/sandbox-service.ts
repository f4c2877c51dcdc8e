/**
 * Reading and moving a sandbox's clock. Moving it carries out, in order, everything that fell
 * due in that sandbox up to the new time (instalments, scheduled charges, ACH outcomes), then
 * answers `ready`: the work runs inside the request, bounded by what fell due.
 */
import type { AppDeps } from '../deps';
import { runDueUpTo } from '../payment-plans/due-work';
import { planPorts } from '../payment-plans/plan-charges';
import { withAutopay } from '../autopay/autopay-due';
import { withOfferExpiry } from '../settlement-offers/offer-expiry';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { sandboxClockMoved } from '../http/token-leases';
import { type ClockStatus, sandboxClockRepo } from './sandbox-clock-repo';

export type SandboxDeps = AppDeps;

export interface ClockAnswer {
  now: string;
  status: ClockStatus;
}

/** How far ahead of the clock `advance_to` may be. */
const MAX_YEARS_AHEAD = 2;

/** The sandbox clock exists for sandbox tokens only; production has no such path. */
function sandboxOnly(tenant: Tenant): void {
  if (tenant.environment !== 'sandbox') throw new ApiError('not_found', 'No such route.');
}

function yearsLater(date: Date, years: number): Date {
  const later = new Date(date.getTime());
  later.setUTCFullYear(later.getUTCFullYear() + years);
  return later;
}

export function sandboxService(deps: SandboxDeps) {
  return {
    async read(tenant: Tenant): Promise<ClockAnswer> {
      sandboxOnly(tenant);
      const row = await sandboxClockRepo(deps.db, tenant.organizationId).read();
      return { now: nowFor(deps.clock, { ...tenant, clockOffsetMs: row.offset_ms }).toISOString(), status: row.status };
    },

    async advance(tenant: Tenant, advanceTo: string): Promise<ClockAnswer> {
      sandboxOnly(tenant);
      const target = new Date(advanceTo);
      const offsetMs = await deps.db.transaction(async (trx) => {
        const clocks = sandboxClockRepo(trx, tenant.organizationId);
        const row = await clocks.lock();
        if (row.status === 'advancing' && !row.abandoned) throw ApiError.conflict('The sandbox clock is still advancing; GET /sandbox/clock answers ready when it is done.');
        const real = deps.clock();
        const now = new Date(real.getTime() + row.offset_ms);
        if (target.getTime() <= now.getTime()) throw ApiError.field('advance_to', `must be later than the sandbox clock (${now.toISOString()})`);
        if (target.getTime() > yearsLater(now, MAX_YEARS_AHEAD).getTime()) throw ApiError.field('advance_to', `must be at most ${MAX_YEARS_AHEAD} years after the sandbox clock (${now.toISOString()})`);
        const offset = target.getTime() - real.getTime();
        await clocks.set(offset, 'advancing');
        return offset;
      });
      // The sandbox's tokens' leases hold the old offset: ended in this process now that the new
      // one is committed (other processes' end within LEASE_MS, token-leases.ts).
      sandboxClockMoved(tenant.organizationId);
      try {
        // Everything due up to the new time, in order, each at its own due time.
        await runDueUpTo(deps, withOfferExpiry(withAutopay(deps, planPorts(deps)), deps), { ...tenant, clockOffsetMs: offsetMs }, target);
      } finally {
        await sandboxClockRepo(deps.db, tenant.organizationId).set(offsetMs, 'ready');
      }
      return { now: nowFor(deps.clock, { ...tenant, clockOffsetMs: offsetMs }).toISOString(), status: 'ready' };
    },
  };
}
