/**
 * Lanes: how the delivery worker keeps one slow endpoint from delaying another.
 *
 * - A webhook holds at most `perWebhook` of a process's attempt slots, and the webhooks of the
 *   slow lane together at most a quarter of them: the others' attempts always find a slot.
 * - A webhook is *seen slow* when its slots have all been taken for more than SLOW_ANSWER_MS
 *   (its answers do not free them), or when its answers take more than SLOW_ANSWER_MS on
 *   average. It then enters the slow lane in the database (`webhooks.slow_until`, for
 *   SLOW_LANE_MINUTES, renewed while it stays slow: delivery-repo.ts `markSlow`): every process
 *   fetches its attempts after every other webhook's due ones (delivery-repo.ts `fetchJobs`).
 *   A fast endpoint's attempts are never fetched after, or put back because of, a slow one's.
 * - A webhook of the slow lane whose answers come within SLOW_ANSWER_MS on average leaves it at
 *   once (`leave`): full slots are a sign a stalled process gives too.
 * - An attempt that finds no slot waits in this process for one of its webhook's, first come
 *   first served, when its webhook is not in the slow lane and its slots are turning over (one
 *   was freed within TURN_MS): a fast webhook's burst goes at the pace its slots free, rather
 *   than being put back for a second and coming back out of order. The wait is bounded (the
 *   caller's `waitMs`, within the lease), and a webhook that frees no slot for TURN_MS sends
 *   all its waiting attempts back at once: a slow webhook holds the process's attempts in hand
 *   for TURN_MS at most, once, before it is seen slow.
 * - A fetch takes at most what a webhook may hold in hand (`fetchLimits`): its slots' worth
 *   and as many again to wait for them while they turn over, else (a new webhook, one whose
 *   requests all stay open, one in the slow lane) only its slots' worth. A webhook whose attempts go unanswered is not fetched at all until they
 *   are answered: its backlog stays in the queue, unread, and costs the other webhooks nothing,
 *   from the first second, before it is known slow.
 * - An attempt that gets no slot is put back, spread over the time the slots take to free:
 *   the n-th one parked waits about n × (its webhook's mean answer time) / perWebhook.
 *
 * Nothing here decides what is delivered, only when: the lane lives in the database, and the
 * counts below are this process's view of its own slots, rebuilt from nothing on restart.
 */
import { DEFER_SECONDS } from './delivery-jobs';
import type { FetchLimits } from './delivery-repo';

/** An endpoint slower than this (on average, or holding all its slots this long) is slow. */
export const SLOW_ANSWER_MS = 1000;

export interface Lanes {
  /**
   * A slot for an attempt to `webhookId`: at once when one is free, else (see above) the first
   * one freed within `waitMs`; false when it gets none (park the attempt).
   */
  take(webhookId: string, slow: boolean, waitMs: number): boolean | Promise<boolean>;
  /** Frees the slot (to the first attempt waiting for one), noting how long the attempt took (undefined: nothing was sent). */
  release(webhookId: string, slow: boolean, ms: number | undefined): void;
  /** Seconds to park an attempt that found no slot. */
  parkSeconds(webhookId: string, slow: boolean): number;
  /** Whether this process has seen the webhook slow lately. */
  seenSlow(webhookId: string): boolean;
  /**
   * The webhooks seen slow since the last call, to be put in the slow lane, and those of the
   * slow lane seen answering fast, to be taken out of it.
   */
  takeLaneChanges(): LaneChanges;
  /** A job of `webhookId` fetched (in hand until `drop`): what the next fetch may take of it is less. */
  hold(webhookId: string | undefined, slow: boolean): void;
  drop(webhookId: string | undefined): void;
  /** What the next fetch may take, of each webhook and of the slow ones together (delivery-repo.ts `fetchJobs`). */
  fetchLimits(batchSize: number): FetchLimits;
}

export interface LaneChanges {
  slow: string[];
  fast: string[];
}

/** A webhook whose slots are all taken and none freed for this long has its waiting attempts parked. */
export const TURN_MS = 500;

interface Waiter {
  /** Settles the wait: true with a slot, false without. */
  grant(slot: boolean): void;
  timer: NodeJS.Timeout;
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
  /** What the database is to learn of each webhook's lane: the last seen wins. */
  let changes = new Map<string, 'slow' | 'fast'>();

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
    if (!lately(webhookId)) changes.set(webhookId, 'slow');
    slowAt.set(webhookId, Date.now());
  };
  const lately = (webhookId: string) => Date.now() - (slowAt.get(webhookId) ?? 0) < REMEMBER_MS;

  /** Attempts waiting for a slot, by webhook (none for a webhook in the slow lane), first come first served. */
  const waiting = new Map<string, Waiter[]>();
  /** Per webhook with waiters: parks them all when no slot is freed for TURN_MS. */
  const watchdogs = new Map<string, NodeJS.Timeout>();

  const tryTake = (webhookId: string, slow: boolean): boolean => {
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
  };
  const watch = (webhookId: string) => {
    clearTimeout(watchdogs.get(webhookId));
    // Checked again after the answers already in (a busy event loop runs timers first): a slot
    // freed meanwhile has armed another watchdog.
    const timer: NodeJS.Timeout = setTimeout(() => setImmediate(() => watchdogs.get(webhookId) === timer && dismiss(webhookId)), TURN_MS);
    // A watchdog never keeps a process alive on its own (a worker stopping has nothing to park).
    timer.unref();
    watchdogs.set(webhookId, timer);
  };
  /** Parks every attempt waiting for a slot of `webhookId`. */
  const dismiss = (webhookId: string) => {
    clearTimeout(watchdogs.get(webhookId));
    watchdogs.delete(webhookId);
    const queue = waiting.get(webhookId) ?? [];
    waiting.delete(webhookId);
    for (const waiter of queue) waiter.grant(false);
  };
  /** Hands freed slots of `webhookId` to its waiting attempts, first come first served. */
  const serve = (webhookId: string) => {
    const queue = waiting.get(webhookId);
    if (!queue) return;
    while (queue.length > 0 && tryTake(webhookId, false)) queue.shift()!.grant(true);
    if (queue.length > 0) return watch(webhookId);
    waiting.delete(webhookId);
    clearTimeout(watchdogs.get(webhookId));
    watchdogs.delete(webhookId);
  };

  /** Webhooks whose attempts came to this process in the slow lane (the database's), lately. */
  const laned = new Map<string, number>();
  const inLane = (webhookId: string) => lately(webhookId) || Date.now() - (laned.get(webhookId) ?? 0) < REMEMBER_MS;
  const inSlowLane = (webhookId: string) => {
    if (laned.size > MAX_TRACKED) laned.clear();
    laned.set(webhookId, Date.now());
  };
  /**
   * A webhook of the slow lane whose answers come within SLOW_ANSWER_MS on average leaves it at
   * once, here and in the database. Slots full for SLOW_ANSWER_MS are the first sign of a slow
   * endpoint, before any answer, but a busy machine gives it too (this process, or the
   * receiver, stalled for a second): a fast endpoint put in the slow lane by it shared the slow
   * lane's slots with the slow one for SLOW_LANE_MINUTES, at 2 % of its rate (the isolation
   * bench at load 10). Its answers say which it was.
   */
  const leave = (webhookId: string) => {
    slowAt.delete(webhookId);
    laned.delete(webhookId);
    changes.set(webhookId, 'fast');
  };
  /** Jobs in hand (fetched, not yet sent and answered, or put back), by webhook. */
  const held = new Map<string, number>();
  /** When each webhook last freed a slot (had an answer). */
  const freedAt = new Map<string, number>();
  /**
   * Whether a webhook's slots are turning over: one was freed within TURN_MS. One holding all
   * its slots for SLOW_ANSWER_MS is seen slow, whether or not more of its jobs come.
   */
  const turning = (webhookId: string) => {
    if ((busy.get(webhookId) ?? 0) >= perWebhook) {
      const since = fullSince.get(webhookId) ?? Date.now();
      fullSince.set(webhookId, since);
      if (Date.now() - since > SLOW_ANSWER_MS) note(webhookId);
    }
    return Date.now() - (freedAt.get(webhookId) ?? 0) < TURN_MS;
  };

  return {
    hold(webhookId, slow) {
      if (!webhookId) return;
      held.set(webhookId, (held.get(webhookId) ?? 0) + 1);
      if (slow) inSlowLane(webhookId);
    },
    drop(webhookId) {
      if (!webhookId) return;
      const left = (held.get(webhookId) ?? 1) - 1;
      if (left > 0) held.set(webhookId, left);
      else held.delete(webhookId);
    },

    fetchLimits(batchSize) {
      // A webhook may have in hand its slots' worth and as many again waiting for them while
      // its answers free them (one freed within TURN_MS), else only its slots' worth (a new
      // webhook until its first answer); one in the slow lane only what it may send (its
      // attempts never wait in hand). No jobs are fetched to wait behind unanswered ones.
      const caps: Record<string, number> = {};
      let slowHeld = 0;
      for (const [webhookId, count] of held) {
        const answering = turning(webhookId);
        const slow = inLane(webhookId);
        if (slow) slowHeld += count;
        caps[webhookId] = Math.max(0, (slow ? Math.min(perWebhook, slowSlots) : answering ? 2 * perWebhook : perWebhook) - count);
      }
      const slow = [...new Set([...slowAt.keys(), ...laned.keys()])].filter(inLane);
      // Nothing in hand but answering lately: as many again too.
      for (const [webhookId, at] of freedAt) if (!(webhookId in caps) && Date.now() - at < TURN_MS && !inLane(webhookId)) caps[webhookId] = 2 * perWebhook;
      return { batchSize, caps, otherCap: perWebhook, slow, slowCap: Math.max(0, slowSlots - slowHeld) };
    },

    take(webhookId, slow, waitMs) {
      if (slow) inSlowLane(webhookId);
      if (tryTake(webhookId, slow)) return true;
      // In the slow lane, or its slots have not turned over lately: park it.
      const since = fullSince.get(webhookId);
      const turning = waiting.has(webhookId) || (since !== undefined && Date.now() - since < TURN_MS);
      if (slow || waitMs <= 0 || !turning) return false;
      return new Promise<boolean>((done) => {
        let queue = waiting.get(webhookId);
        if (!queue) {
          waiting.set(webhookId, (queue = []));
          watch(webhookId);
        }
        const waiter: Waiter = {
          grant(slot) {
            clearTimeout(waiter.timer);
            done(slot);
          },
          timer: setTimeout(() => {
            const list = waiting.get(webhookId);
            const at = list?.indexOf(waiter) ?? -1;
            if (at >= 0) list!.splice(at, 1);
            if (list?.length === 0) dismiss(webhookId);
            done(false);
          }, waitMs).unref(),
        };
        queue.push(waiter);
      });
    },

    release(webhookId, slow, ms) {
      const left = (busy.get(webhookId) ?? 1) - 1;
      if (left > 0) busy.set(webhookId, left);
      else busy.delete(webhookId);
      fullSince.delete(webhookId);
      if (freedAt.size > MAX_TRACKED) freedAt.clear();
      freedAt.set(webhookId, Date.now());
      if (slow) slowInFlight -= 1;
      serve(webhookId);
      if (ms === undefined) return;
      const state = paceOf(webhookId);
      state.meanMs = state.meanMs === 0 ? ms : state.meanMs * 0.9 + ms * 0.1;
      state.parked = Math.max(0, state.parked - 1);
      if (state.meanMs > SLOW_ANSWER_MS) note(webhookId);
      else if (inLane(webhookId)) leave(webhookId);
    },

    parkSeconds(webhookId, slow) {
      const state = paceOf(webhookId);
      state.parked += 1;
      // Before its first answer, a webhook's answers take at least as long as its slots have
      // been full, and one in the slow lane at least SLOW_ANSWER_MS.
      const full = fullSince.get(webhookId);
      const meanMs = Math.max(state.meanMs, full === undefined ? 0 : Date.now() - full, slow ? SLOW_ANSWER_MS : 0);
      return Math.min(3600, Math.max(DEFER_SECONDS, Math.ceil((state.parked * meanMs) / perWebhook / 1000)));
    },

    seenSlow: lately,

    takeLaneChanges() {
      const taken = { slow: [] as string[], fast: [] as string[] };
      for (const [webhookId, lane] of changes) taken[lane].push(webhookId);
      changes = new Map();
      return taken;
    },
  };
}
