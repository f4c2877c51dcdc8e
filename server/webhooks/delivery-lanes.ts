/**
 * Lanes: how the delivery worker keeps one slow endpoint from delaying another.
 *
 * - A webhook holds at most `perWebhook` of a process's attempt slots, and the webhooks of the
 *   slow lane together at most a quarter of them: the others' attempts always find a slot.
 * - A webhook is *seen slow* when its slots have all been taken for more than SLOW_ANSWER_MS
 *   (its answers do not free them), or when its answers take more than SLOW_ANSWER_MS on
 *   average. It then enters the slow lane in the database (`webhooks.slow_until`, for
 *   SLOW_LANE_MINUTES, renewed while it stays slow: delivery-repo.ts `markSlow`): its waiting
 *   attempts, and every attempt enqueued for it while it is there, have pg-boss priority
 *   SLOW_PRIORITY, so every process fetches them only when no other webhook's attempt is due.
 *   A fast endpoint's attempts are never fetched after, or put back because of, a slow one's.
 * - An attempt that finds no slot is put back, spread over the time the slots take to free:
 *   the n-th one parked waits about n × (its webhook's mean answer time) / perWebhook.
 *
 * Nothing here decides what is delivered, only when: the lane lives in the database, and the
 * counts below are this process's view of its own slots, rebuilt from nothing on restart.
 */
import { DEFER_SECONDS } from './delivery-jobs';

/** An endpoint slower than this (on average, or holding all its slots this long) is slow. */
export const SLOW_ANSWER_MS = 1000;

export interface Lanes {
  /** Takes a slot for an attempt to `webhookId`; false when it has none (park the attempt). */
  take(webhookId: string, slow: boolean): boolean;
  /** Frees the slot, noting how long the attempt took (undefined: nothing was sent). */
  release(webhookId: string, slow: boolean, ms: number | undefined): void;
  /** Seconds to park an attempt that found no slot. */
  parkSeconds(webhookId: string): number;
  /** Whether this process has seen the webhook slow lately. */
  seenSlow(webhookId: string): boolean;
  /** The webhooks seen slow since the last call: to be put in the slow lane. */
  takeSeenSlow(): string[];
}

const MAX_TRACKED = 10_000;
/** How long a webhook seen slow is treated as slow by this process without seeing it again. */
const REMEMBER_MS = 60_000;

export function deliveryLanes({ concurrency, perWebhook }: { concurrency: number; perWebhook: number }): Lanes {
  const slowSlots = Math.max(1, Math.floor(concurrency / 4));
  let slowInFlight = 0;
  const busy = new Map<string, number>();
  /** Since when each webhook at its cap has had no free slot. */
  const fullSince = new Map<string, number>();
  const pace = new Map<string, { meanMs: number; parked: number }>();
  const slowAt = new Map<string, number>();
  let noted = new Set<string>();

  const paceOf = (webhookId: string) => {
    let state = pace.get(webhookId);
    if (!state) {
      if (pace.size > MAX_TRACKED) pace.clear();
      pace.set(webhookId, (state = { meanMs: 0, parked: 0 }));
    }
    return state;
  };
  const note = (webhookId: string) => {
    if (slowAt.size > MAX_TRACKED) slowAt.clear();
    if (!lately(webhookId)) noted.add(webhookId);
    slowAt.set(webhookId, Date.now());
  };
  const lately = (webhookId: string) => Date.now() - (slowAt.get(webhookId) ?? 0) < REMEMBER_MS;

  return {
    take(webhookId, slow) {
      const taken = busy.get(webhookId) ?? 0;
      if (taken >= perWebhook) {
        const since = fullSince.get(webhookId) ?? Date.now();
        fullSince.set(webhookId, since);
        if (Date.now() - since > SLOW_ANSWER_MS) note(webhookId);
        return false;
      }
      if (slow && slowInFlight >= slowSlots) return false;
      busy.set(webhookId, taken + 1);
      if (slow) slowInFlight += 1;
      return true;
    },

    release(webhookId, slow, ms) {
      const left = (busy.get(webhookId) ?? 1) - 1;
      if (left > 0) busy.set(webhookId, left);
      else busy.delete(webhookId);
      fullSince.delete(webhookId);
      if (slow) slowInFlight -= 1;
      if (ms === undefined) return;
      const state = paceOf(webhookId);
      state.meanMs = state.meanMs === 0 ? ms : state.meanMs * 0.9 + ms * 0.1;
      state.parked = Math.max(0, state.parked - 1);
      if (state.meanMs > SLOW_ANSWER_MS) note(webhookId);
    },

    parkSeconds(webhookId) {
      const state = paceOf(webhookId);
      state.parked += 1;
      // Before its first answer, a webhook's answers take at least as long as its slots have been full.
      const full = fullSince.get(webhookId);
      const meanMs = Math.max(state.meanMs, full === undefined ? 0 : Date.now() - full);
      return Math.min(3600, Math.max(DEFER_SECONDS, Math.ceil((state.parked * meanMs) / perWebhook / 1000)));
    },

    seenSlow: lately,

    takeSeenSlow() {
      const seen = [...noted];
      noted = new Set();
      return seen;
    },
  };
}
