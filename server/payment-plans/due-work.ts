/**
 * Everything that falls due by itself, carried out in order of its due time: plan instalments
 * (with their retries) and scheduled charges; in a sandbox whose clock is moved, also the
 * outcome of ACH debits whose settle time passed on that clock (at real time they are settled
 * by their own durable job). The scheduler runs it for every tenant at real time (each sandbox
 * on its own clock); moving a sandbox clock runs it for that sandbox up to the new time, each
 * item at its own due time.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { flowDue } from './due-flow';
import { dueInstalments, dueInstalmentsOf, runInstalment, startInstalments, type DueInstalment, type DueRef, type InstalmentCharger, type LockAccounts, type RunnerDeps, type Started } from './plan-runner';
import { batcher, DUE_BATCH } from '../kernel/batcher';

/** One due item other than an instalment, carried out at `now` (its tenant's time); answers whether it did anything. */
export type DueRunner = (tenant: Tenant, id: string, now: Date) => Promise<boolean>;

export interface DueWorkPorts {
  charge: InstalmentCharger;
  lockAccounts: LockAccounts;
  scheduledCharge: DueRunner;
  /** The outcome of a pending ACH debit (only the sandbox clock's advance asks early). */
  settlement: DueRunner;
  dueScheduledCharges: (realNow: Date) => Promise<DueRef[]>;
  dueScheduledChargesOf: (tenant: Tenant, upTo: Date) => Promise<DueRef[]>;
  dueSettlementsOf: (tenant: Tenant, upTo: Date) => Promise<{ id: string; due_at: Date }[]>;
  /** Due work beside the payments (payment reminders, messages held by quiet hours), each with its own queries and runner. */
  others?: DueSource[];
  /**
   * The room of a tenant's processor at its pace (plan-charges.ts): an instalment or a scheduled
   * charge of a tenant whose processor has none now is not started (nothing reserved) until it has.
   */
  room?: TenantRoom;
}

export interface TenantRoom {
  open: (tenant: Tenant) => boolean;
  take: (tenant: Tenant) => () => void;
  onOpen: (wake: () => void) => () => void;
}

export interface DueSource {
  kind: string;
  due: (realNow: Date) => Promise<DueRef[]>;
  dueOf: (tenant: Tenant, upTo: Date) => Promise<DueRef[]>;
  run: DueRunner;
}

type Kind = 'instalment' | 'scheduled-charge' | 'settlement' | string;

const tenantOfRef = (offsetMs: (ref: DueRef) => number) => (ref: DueRef): Tenant => ({
  organizationId: ref.organization_id,
  environment: ref.environment,
  tokenHash: '',
  clockOffsetMs: offsetMs(ref),
});

/**
 * What is due now, every tenant, as a flow (due-flow.ts): at most `inFlight` items (each waiting
 * on the gateway, mostly) in flight at once, the next starting as soon as one ends, taken from
 * the tenants in turn; answers how many items it carried out. Exactly once is the database's
 * keys' (each item checks in its own transaction that it is still due).
 */
export async function runDueNow(deps: RunnerDeps, ports: DueWorkPorts, inFlight = DUE_WORK_CHARGES_IN_FLIGHT): Promise<number> {
  const others = ports.others ?? [];
  // Instalments started together in one short transaction each (group commit, kernel/batcher.ts): the
  // flow's items that start while a batch is being started go together in the next, at most
  // half the flow in one (dueBatchFor).
  const starts = batcher<DueInstalment, Started>((items) => startInstalments(deps, ports.charge, ports.lockAccounts, items), { max: dueBatchFor(inFlight) });
  const charges = (item: DueItem) => item.kind === 'instalment' || item.kind === 'scheduled-charge';
  const tenantOfItem = (item: DueItem) => tenantOfRef(() => item.offset)(item.ref);
  const room = ports.room;
  return flowDue<DueItem>({
    width: inFlight,
    // Charges wait for their processor's room before they are reserved, not after.
    room: room && {
      open: (item) => !charges(item) || room.open(tenantOfItem(item)),
      take: (item) => (charges(item) ? room.take(tenantOfItem(item)) : () => undefined),
      onOpen: room.onOpen,
    },
    keyOf: (item) => `${item.kind}:${item.ref.id}`,
    laneOf: (item) => `${item.kind}:${item.ref.lane ?? item.ref.id}`,
    tenantOf: (item) => `${item.ref.organization_id}:${item.ref.environment}`,
    fetch: async (known) => {
      const realNow = deps.clock();
      const due = [
        // Enough rows that what this process already holds cannot fill the batch.
        ...(await dueInstalments(deps.db, realNow, FLOW_BATCH + known)).map((ref) => ({ ref, kind: 'instalment' as Kind })),
        ...(await ports.dueScheduledCharges(realNow)).map((ref) => ({ ref, kind: 'scheduled-charge' as Kind })),
        ...(await Promise.all(others.map(async (source) => (await source.due(realNow)).map((ref) => ({ ref, kind: source.kind as Kind }))))).flat(),
      ].sort((a, b) => a.ref.due_at.getTime() - b.ref.due_at.getTime());
      const offsets = await sandboxOffsets(deps.db, due.map((item) => item.ref));
      return due.map((item) => ({ ...item, offset: offsets.get(item.ref.organization_id) ?? 0 }));
    },
    run: async ({ ref, kind, offset }) => {
      const now = new Date(deps.clock().getTime() + (ref.environment === 'sandbox' ? offset : 0));
      const tenant = tenantOfRef(() => offset)(ref);
      const other = others.find((source) => source.kind === kind);
      if (other) return other.run(tenant, ref.id, now);
      if (kind === 'instalment') {
        const started = await starts.add({ ref, tenant, now });
        if (typeof started === 'boolean') return started;
        await started.finish();
        return true;
      }
      return ports.scheduledCharge(tenant, ref.id, now);
    },
  });
}

interface DueItem {
  ref: DueRef;
  kind: Kind;
  /** The sandbox clock's offset of the item's tenant (0 in production). */
  offset: number;
}

/** Due instalments read per refill of the flow (beyond those already held). */
const FLOW_BATCH = 1000;

/**
 * One sandbox's due items up to `upTo`, earliest first, each carried out at its own due time
 * (so its events and timestamps read as if the clock had stopped there).
 */
export async function runDueUpTo(deps: RunnerDeps, ports: DueWorkPorts, tenant: Tenant, upTo: Date): Promise<number> {
  let done = 0;
  const offset = tenant.clockOffsetMs ?? 0;
  const self = tenantOfRef(() => offset);
  // Bounded: each pass carries out one item or stops; an item that does not progress stops the advance.
  for (let pass = 0; pass < 100_000; pass += 1) {
    const [instalment] = await dueInstalmentsOf(deps.db, tenant, upTo, 1);
    const [scheduled] = await ports.dueScheduledChargesOf(tenant, upTo);
    const [settlement] = await ports.dueSettlementsOf(tenant, upTo);
    const firstOthers = await Promise.all((ports.others ?? []).map(async (source) => ({ source, ref: (await source.dueOf(tenant, upTo))[0] })));
    // Earliest first; at one time, instalments, then scheduled charges, then settlements.
    const next = (
      [
        instalment && { kind: 'instalment' as Kind, id: instalment.id, due_at: instalment.due_at, ref: instalment },
        scheduled && { kind: 'scheduled-charge' as Kind, id: scheduled.id, due_at: scheduled.due_at },
        settlement && { kind: 'settlement' as Kind, id: settlement.id, due_at: settlement.due_at },
        ...firstOthers.map(({ source, ref }) => ref && { kind: source.kind as Kind, id: ref.id, due_at: ref.due_at }),
      ].filter(Boolean) as { kind: Kind; id: string; due_at: Date; ref?: DueRef }[]
    ).reduce<{ kind: Kind; id: string; due_at: Date; ref?: DueRef } | undefined>((first, item) => (!first || item.due_at < first.due_at ? item : first), undefined);
    if (!next) break;
    const now = next.due_at;
    // The app's clock as it would read when the sandbox clock showed `now`.
    const itemDeps = { ...deps, clock: () => new Date(now.getTime() - offset) };
    const other = ports.others?.find((source) => source.kind === next.kind);
    const ran = other
      ? await other.run(self({ id: next.id, organization_id: tenant.organizationId, environment: tenant.environment, due_at: now }), next.id, now)
      : next.kind === 'instalment'
        ? await runInstalment(itemDeps, ports.charge, ports.lockAccounts, next.ref!, self, now)
        : next.kind === 'scheduled-charge'
          ? await ports.scheduledCharge(self({ id: next.id, organization_id: tenant.organizationId, environment: tenant.environment, due_at: now }), next.id, now)
          : await ports.settlement(self({ id: next.id, organization_id: tenant.organizationId, environment: tenant.environment, due_at: now }), next.id, now);
    if (!ran) break;
    done += 1;
  }
  return done;
}

/** How many due items one process has in flight at once by default (DUE_WORK_CHARGES_IN_FLIGHT). */
export const DUE_WORK_CHARGES_IN_FLIGHT = 64;

/**
 * Instalments per batch of the due work's starts and of its answers' records with `inFlight`
 * in flight: half of them (at most DUE_BATCH). The flow's items then make two batches of each
 * step, which the batcher runs at once: while one batch's statements are in the database, the
 * other's rows and events are built in this process. In one batch of them all, the whole flow
 * went as one convoy (start, gateway, record, then the next start), the process and the
 * database each idle while the other worked: at 64 in flight a record batch of 64 took 114 ms,
 * one step after the other, and never two at once (bench:scheduler at latency 0; in halves,
 * under load 4-5: 362 and 484/s against 319 and 284/s, the event loop busy 73% against 58%).
 */
export const dueBatchFor = (inFlight: number): number => Math.max(1, Math.min(DUE_BATCH, Math.ceil(inFlight / 2)));

async function sandboxOffsets(db: Knex, refs: DueRef[]): Promise<Map<string, number>> {
  const ids = [...new Set(refs.filter((ref) => ref.environment === 'sandbox').map((ref) => ref.organization_id))];
  if (ids.length === 0) return new Map();
  const rows: { organization_id: string; offset_ms: string }[] = await db('sandbox_clocks').whereIn('organization_id', ids).select('organization_id', 'offset_ms');
  return new Map(rows.map((row) => [row.organization_id, Number(row.offset_ms)]));
}
