/**
 * Everything that falls due by itself, carried out in order of its due time: plan instalments
 * (with their retries). The scheduler runs it for every tenant at real time (each sandbox on
 * its own clock); moving a sandbox clock runs it for that sandbox up to the new time, each
 * item at its own due time.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../http/auth';
import type { DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { dueInstalments, dueInstalmentsOf, runInstalment, type DueRef, type InstalmentCharger, type RunnerDeps } from './plan-runner';

export interface DueWorkPorts {
  charge: InstalmentCharger;
  lockAccount: (trx: Knex.Transaction, tenant: Tenant, accountId: string) => Promise<DebtAccountRow | undefined>;
}

const tenantOfRef = (offsetMs: (ref: DueRef) => number) => (ref: DueRef): Tenant => ({
  organizationId: ref.organization_id,
  environment: ref.environment,
  tokenHash: '',
  clockOffsetMs: offsetMs(ref),
});

/** A pass over what is due now, every tenant; answers how many items it carried out. */
export async function runDueNow(deps: RunnerDeps, ports: DueWorkPorts): Promise<number> {
  let done = 0;
  // Each batch is what is due at this moment; an item another process holds is waited for,
  // then found done (or still due, and done here).
  for (let pass = 0; pass < 1000; pass += 1) {
    const realNow = deps.clock();
    const due = await dueInstalments(deps.db, realNow);
    if (due.length === 0) break;
    const offsets = await sandboxOffsets(deps.db, due);
    let progressed = 0;
    for (const ref of due) {
      const offset = offsets.get(ref.organization_id) ?? 0;
      const now = new Date(deps.clock().getTime() + (ref.environment === 'sandbox' ? offset : 0));
      if (await runInstalment(deps, ports.charge, ports.lockAccount, ref, tenantOfRef(() => offset), now)) progressed += 1;
    }
    done += progressed;
    if (progressed === 0) break;
  }
  return done;
}

/**
 * One sandbox's due items up to `upTo`, earliest first, each carried out at its own due time
 * (so its events and timestamps read as if the clock had stopped there).
 */
export async function runDueUpTo(deps: RunnerDeps, ports: DueWorkPorts, tenant: Tenant, upTo: Date): Promise<number> {
  let done = 0;
  const offset = tenant.clockOffsetMs ?? 0;
  for (let pass = 0; pass < 10_000; pass += 1) {
    const [next] = await dueInstalmentsOf(deps.db, tenant, upTo, 1);
    if (!next) break;
    const now = next.due_at;
    // The app's clock as it would read when the sandbox clock showed `now`.
    const itemDeps = { ...deps, clock: () => new Date(now.getTime() - offset) };
    if (!(await runInstalment(itemDeps, ports.charge, ports.lockAccount, next, tenantOfRef(() => offset), now))) break;
    done += 1;
  }
  return done;
}

async function sandboxOffsets(db: Knex, refs: DueRef[]): Promise<Map<string, number>> {
  const ids = [...new Set(refs.filter((ref) => ref.environment === 'sandbox').map((ref) => ref.organization_id))];
  if (ids.length === 0) return new Map();
  const rows: { organization_id: string; offset_ms: string }[] = await db('sandbox_clocks').whereIn('organization_id', ids).select('organization_id', 'offset_ms');
  return new Map(rows.map((row) => [row.organization_id, Number(row.offset_ms)]));
}
