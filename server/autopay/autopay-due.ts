/**
 * Autopay as a source of due work: the scheduler's pass at real time and a sandbox clock's
 * advance run it beside instalments and scheduled charges, each run at its own due time.
 */
import type { AppDeps } from '../deps';
import type { DueSource, DueWorkPorts } from '../payment-plans/due-work';
import { dueAutopays, dueAutopaysOf } from './autopay-repo';
import { runAutopay } from './autopay-runner';

export function autopayDueSource(deps: AppDeps): DueSource {
  return {
    kind: 'autopay',
    due: (realNow) => dueAutopays(deps.db, realNow),
    dueOf: (tenant, upTo) => dueAutopaysOf(deps.db, tenant, upTo),
    // The app's clock as it reads when the tenant's clock shows `now`.
    run: (tenant, accountId, now) => runAutopay({ ...deps, clock: () => new Date(now.getTime() - (tenant.clockOffsetMs ?? 0)) }, tenant, accountId, now),
  };
}

/** The due-work ports with autopay among the other sources. */
export function withAutopay(deps: AppDeps, ports: DueWorkPorts): DueWorkPorts {
  return { ...ports, others: [...(ports.others ?? []), autopayDueSource(deps)] };
}
