/**
 * The tenant's time. Each organization's sandbox has its own clock, which starts at real time,
 * runs at real speed and can only be moved forward (Stripe's test clocks are the model). It is
 * kept as an offset from real time, so production, which has no offset, reads the real clock
 * through the same function. Moving it is the sandbox's business (server/sandbox/).
 */
import type { Knex } from 'knex';
import type { Tenant } from './tenant';

export const SANDBOX_CLOCKS = 'sandbox_clocks';

/** The time of a tenant's rules: the app's clock, plus the sandbox's offset. */
export function nowFor(clock: () => Date, tenant: Tenant): Date {
  return new Date(clock().getTime() + (tenant.environment === 'sandbox' ? (tenant.clockOffsetMs ?? 0) : 0));
}

/** `tenant` with its sandbox clock loaded, for work that does not come through a token (workers, the Portal). */
export async function withClock(db: Knex, tenant: Tenant): Promise<Tenant> {
  if (tenant.environment !== 'sandbox') return { ...tenant, clockOffsetMs: 0 };
  const row = await db(SANDBOX_CLOCKS).where({ organization_id: tenant.organizationId }).first('offset_ms');
  return { ...tenant, clockOffsetMs: Number(row?.offset_ms ?? 0) };
}
