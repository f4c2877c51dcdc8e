/**
 * Offers lapse at `expires_at` on their tenant's clock: one more source of the scheduler's due
 * work (a query over due rows, run every minute on pg-boss and on a sandbox clock's advance),
 * so an expiry is durable and happens once, whichever process finds it.
 */
import type { Knex } from 'knex';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import type { DueRef } from '../payment-plans/plan-runner';
import type { DueSource, DueWorkPorts } from '../payment-plans/due-work';
import { offerRepo, SETTLEMENT_OFFERS } from './offer-repo';
import { expireOffer } from './offer-lifecycle';

const BATCH = 200;

/** Pending offers whose `expires_at` passed at `realNow` on their tenant's clock, earliest first. */
async function dueExpiries(db: Knex, realNow: Date): Promise<DueRef[]> {
  const { rows } = await db.raw<{ rows: DueRef[] }>(
    `SELECT o.id, o.organization_id, o.environment, o.expires_at AS due_at
       FROM ${SETTLEMENT_OFFERS} o
       LEFT JOIN sandbox_clocks c ON o.environment = 'sandbox' AND c.organization_id = o.organization_id
      WHERE o.status = 'pending' AND o.expires_at IS NOT NULL
        AND o.expires_at <= ?::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
      ORDER BY o.expires_at
      LIMIT ?`,
    [realNow, BATCH],
  );
  return rows;
}

async function dueExpiriesOf(db: Knex, tenant: Tenant, upTo: Date): Promise<DueRef[]> {
  return offerRepo(db, tenant)
    .query()
    .where('status', 'pending')
    .whereNotNull('expires_at')
    .where('expires_at', '<=', upTo)
    .orderBy('expires_at')
    .limit(1)
    .select('id', 'organization_id', 'environment', 'expires_at as due_at');
}

async function expire(deps: Pick<AppDeps, 'db' | 'events'>, tenant: Tenant, id: string, now: Date): Promise<boolean> {
  return deps.db.transaction(async (trx) => {
    const offer = await offerRepo(trx, tenant).find(id, { forUpdate: true });
    if (!offer || offer.status !== 'pending' || !offer.expires_at || offer.expires_at.getTime() > now.getTime()) return false;
    await expireOffer(trx, deps.events, tenant, offer, now);
    return true;
  });
}

export function offerExpiry(deps: Pick<AppDeps, 'db' | 'events'>): DueSource {
  return {
    kind: 'settlement-offer-expiry',
    due: (realNow) => dueExpiries(deps.db, realNow),
    dueOf: (tenant, upTo) => dueExpiriesOf(deps.db, tenant, upTo),
    run: (tenant, id, now) => expire(deps, tenant, id, now),
  };
}

/** The scheduler's ports with offer expiry among the other due work. */
export function withOfferExpiry(ports: DueWorkPorts, deps: Pick<AppDeps, 'db' | 'events'>): DueWorkPorts {
  return { ...ports, others: [...(ports.others ?? []), offerExpiry(deps)] };
}
