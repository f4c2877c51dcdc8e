/**
 * Leases of the rate limit's points: a process that sees a token often takes a
 * small block of its points in the shared count (in the statement that counts its requests,
 * http/access.ts) and hands them out itself, one per request, without a round trip. Every
 * request is still counted across processes: a lease's points are in the shared row before
 * any of them is used, and what a lease did not use is given back when it ends.
 *
 * A lease is small and short, so the limit stays what the contract says (16 points at first,
 * doubled while each is used up within a quarter of LEASE_MS, up to 256 and 1/64 of the limit,
 * halved when one ends with points left):
 * - it is taken only while the token has used at most half its quota in the window (above
 *   that, every request is counted alone, as before), so the last half is exact;
 * - it lasts at most LEASE_MS, and never past the window's end: a token revoked or deleted is
 *   refused by every process at most LEASE_MS after the revocation commits (the statement
 *   checks the token again when the lease ends);
 * - a sandbox token's lease carries its tenant as the statement read it, the sandbox clock's
 *   offset included: moving the clock (sandbox-service.ts) ends that organization's leases in
 *   this process at once (sandboxClockMoved), so a request after the move's answer sees the
 *   new time; another process sees it within LEASE_MS, when its lease ends.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { RATE_LIMIT_TABLE } from './rate-limit';

/** How long a lease lasts at most, and so how long a revoked token may still be accepted. */
export const LEASE_MS = 1000;
/** Points of a token's first lease, and the most one lease takes (and never over 1/64 of the limit). */
const FIRST = 16;
const MOST = 256;

interface Lease {
  tenant: Tenant;
  /** The next number of the window handed out, and the last one the lease holds. */
  next: number;
  last: number;
  /** Date.now() when the lease ends, and when the window ends. */
  endsAt: number;
  windowEndsAt: number;
  /** The count row's key and its `expire`: a refund applies to that window only. */
  key: string;
  expire: string;
  /** Date.now() when it was taken: a lease used up in a quarter of LEASE_MS doubles the next. */
  takenAt: number;
  timer: NodeJS.Timeout;
}

/** What a request learns from a lease: its tenant and its number in the window. */
export interface LeasedVerdict {
  tenant: Tenant;
  points: number;
  msBeforeNext: number;
}

export interface TokenLeases {
  /** A request served from a live lease of its token, or undefined (it is counted by the statement). */
  take(tokenHash: string, now: number): LeasedVerdict | undefined;
  /** How many points to ask for a lease with this batch's `asked` requests of the token (0: none). */
  ask(tokenHash: string, asked: number): number;
  /**
   * After the statement: the token's tenant, the total it returned (`points`, a lease's
   * included), how many of them are the lease's, and the window.
   */
  counted(tokenHash: string, row: { tenant: Tenant; points: number; leased: number; key: string; expire: string; msBeforeNext: number; clockMovesBefore: number }): void;
  /** Sandbox clock moves in this process so far: read before the statement, given back to `counted`. */
  clockMoves(): number;
  /** Ends the leases of the sandbox tokens of `organizationId` (its clock moved). */
  endSandboxOf(organizationId: string): void;
}

/** Every TokenLeases of this process (one per app), for sandboxClockMoved. */
const everyLeases = new Set<WeakRef<TokenLeases>>();
/** Sandbox clock moves in this process so far: a statement that ran across one takes no sandbox lease. */
let clockMoves = 0;

/**
 * The sandbox clock of `organizationId` moved (its new offset committed): its tokens' leases
 * in this process end now, and a statement in flight meanwhile leases none of them.
 */
export function sandboxClockMoved(organizationId: string): void {
  clockMoves++;
  for (const ref of everyLeases) {
    const leases = ref.deref();
    if (leases) leases.endSandboxOf(organizationId);
    else everyLeases.delete(ref);
  }
}

export function tokenLeases(db: Knex, limit: number): TokenLeases {
  const most = Math.min(MOST, Math.floor(limit / 64));
  const leases = new Map<string, Lease>();
  /** The size of a token's next lease. */
  const sizes = new Map<string, number>();
  /** Tokens seen with their last total: only they may ask for a lease. */
  const lastTotal = new Map<string, number>();
  /** Tokens whose last lease was used up, or asked twice in one batch: they ask for the next. */
  const hot = new Set<string>();

  // A refund that fails leaves the count above the requests made: the safe side of a limit.
  const refund = (key: string, expire: string, points: number) =>
    void db(RATE_LIMIT_TABLE)
      .where({ key, expire })
      .update({ points: db.raw('GREATEST(0, points - ?)', [points]) })
      .catch(() => {});

  function end(tokenHash: string, lease: Lease): void {
    if (leases.get(tokenHash) !== lease) return;
    leases.delete(tokenHash);
    clearTimeout(lease.timer);
    if (lease.next > lease.last) return;
    refund(lease.key, lease.expire, lease.last - lease.next + 1);
    // Left over: the token is slower than its lease, the next one is half.
    sizes.set(tokenHash, Math.max(FIRST, (sizes.get(tokenHash) ?? FIRST) / 2));
  }

  const self: TokenLeases = {
    take(tokenHash, now) {
      const lease = leases.get(tokenHash);
      if (!lease) return undefined;
      if (now >= lease.endsAt) {
        end(tokenHash, lease);
        return undefined;
      }
      if (lease.next > lease.last) {
        end(tokenHash, lease);
        hot.add(tokenHash);
        if (now - lease.takenAt < LEASE_MS / 4) sizes.set(tokenHash, Math.min(most, 2 * (sizes.get(tokenHash) ?? FIRST)));
        return undefined;
      }
      return { tenant: lease.tenant, points: lease.next++, msBeforeNext: Math.max(0, lease.windowEndsAt - now) };
    },

    ask(tokenHash, asked) {
      const size = Math.min(most, sizes.get(tokenHash) ?? FIRST);
      if (size < 2 || leases.has(tokenHash)) return 0;
      const total = lastTotal.get(tokenHash);
      if (total === undefined || !(hot.has(tokenHash) || asked > 1)) return 0;
      return total + asked + size <= limit / 2 ? size : 0;
    },

    counted(tokenHash, { tenant, points, leased, key, expire, msBeforeNext, clockMovesBefore }) {
      lastTotal.set(tokenHash, points);
      if (leased === 0) return;
      hot.delete(tokenHash);
      // Another process took the points meanwhile: the lease is not kept (its points would be
      // refused anyway, or taken from the others), and goes back at once. Nor is a sandbox
      // token's whose clock may have moved while the statement ran (it may hold the old offset).
      if (points > limit || (tenant.environment === 'sandbox' && clockMovesBefore !== clockMoves)) return refund(key, expire, leased);
      const now = Date.now();
      const windowEndsAt = now + msBeforeNext;
      const endsAt = Math.min(now + LEASE_MS, windowEndsAt);
      const lease: Lease = { tenant, next: points - leased + 1, last: points, endsAt, windowEndsAt, key, expire, takenAt: now, timer: undefined as unknown as NodeJS.Timeout };
      lease.timer = setTimeout(() => end(tokenHash, lease), Math.max(0, endsAt - now)).unref();
      const previous = leases.get(tokenHash);
      if (previous) end(tokenHash, previous);
      leases.set(tokenHash, lease);
    },

    clockMoves: () => clockMoves,

    endSandboxOf(organizationId) {
      for (const [tokenHash, lease] of leases) {
        if (lease.tenant.environment === 'sandbox' && lease.tenant.organizationId === organizationId) end(tokenHash, lease);
      }
    },
  };
  everyLeases.add(new WeakRef(self));
  return self;
}
