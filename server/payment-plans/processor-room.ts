/**
 * The due work's view of each tenant's processor pace (gateway/processor-pace.ts): whether an
 * instalment or a scheduled charge of the tenant may start now, so that charges wait for their
 * processor's room before they are reserved, not after (due-flow.ts `room`). A tenant's gateway
 * is looked up once (again after a minute: its configuration may change); until it is known its
 * items wait, and the flow is woken when it is. A gateway without a pace (the simulator) always
 * has room.
 */
import type { Tenant } from '../kernel/tenant';
import type { PaymentGateway } from '../gateway/gateway';
import { paceOf } from '../gateway/paced-gateway';
import { onPaceRoom, type ProcessorPace } from '../gateway/processor-pace';
import { tenantKey } from '../payments/family-locks';
import type { TenantRoom } from './due-work';

/** How long a tenant's looked-up pace is used before it is looked up again. */
const LOOKED_UP_FOR_MS = 60_000;

interface Known {
  pace: ProcessorPace | undefined;
  at: number;
  looking: boolean;
}

export function processorRooms(gatewayOf: (tenant: Tenant) => PaymentGateway | undefined | Promise<PaymentGateway | undefined>): TenantRoom {
  const known = new Map<string, Known>();
  const wakers = new Set<() => void>();

  function lookUp(tenant: Tenant, entry: Known): void {
    entry.looking = true;
    Promise.resolve()
      .then(() => gatewayOf(tenant))
      .then(
        (gateway) => paceOf(gateway),
        // No gateway could be built: its charges find that out themselves (a failed attempt, as without a pace).
        () => undefined,
      )
      .then((pace) => {
        Object.assign(entry, { pace, at: Date.now(), looking: false });
        for (const wake of wakers) wake();
      });
  }

  return {
    open(tenant) {
      const key = tenantKey(tenant);
      let entry = known.get(key);
      if (!entry) {
        known.set(key, (entry = { pace: undefined, at: 0, looking: false }));
        lookUp(tenant, entry);
        return false;
      }
      if (!entry.looking && Date.now() - entry.at > LOOKED_UP_FOR_MS) lookUp(tenant, entry);
      // Not known yet: wait for it (woken when it is).
      if (entry.at === 0) return false;
      return entry.pace?.open() ?? true;
    },
    take(tenant) {
      return known.get(tenantKey(tenant))?.pace?.admit() ?? (() => undefined);
    },
    onOpen(wake) {
      const stop = onPaceRoom(wake);
      wakers.add(wake);
      return () => {
        stop();
        wakers.delete(wake);
      };
    },
  };
}
