/**
 * The processor's pace: how fast we may call one processor account (Stripe: 100 requests/s live,
 * 25/s in test mode), shared by every process of the deployment through PostgreSQL, not kept in
 * memory. One row per account (`processor_paces`, migration 055), keyed by an opaque id of its
 * configuration (never a secret, nor an unkeyed digest of one), holds the next free slot on the
 * database's clock; `processor_pace_take` hands out slots under the row's lock, several at once.
 *
 * What it promises, on the database's clock:
 * - slots are at least 1/rate apart, so in ANY one-second window no more than `perSecond` are
 *   granted, whichever processes took them;
 * - a slot is used only early enough in its own second to arrive within it (SEND_MARGIN_MS
 *   before its end; a caller woken later, by a busy event loop, gives it up and takes another),
 *   so no second the processor counts by arrival sees more than `perSecond` requests, as long
 *   as a request reaches it within SEND_MARGIN_MS of being sent;
 * - slots are reserved at most HORIZON_MS ahead: a process that dies wastes at most that much.
 *
 * Cost: one statement (a row lock of microseconds) per batch of up to a tenth of a second's
 * slots, for the callers waiting in this process; at 100/s, about 10 statements a second for
 * the deployment, however many processes share it. Each statement also samples the offset
 * between this process's clock and the database's (the sample with the shortest round trip
 * wins, as NTP does), so a slot is waited for, and checked, in this process's time.
 *
 * Admission (`open`/`admit`): work that will call the processor (the due work's charges) waits
 * for room BEFORE it reserves anything: one process admits what keeps the rate busy while it
 * is reserved, plus half a second of the rate waiting for slots; the rest stays due, holding
 * nothing, and a charge reserved waits about half a second for its slot, not minutes.
 */
import type { Knex } from 'knex';

/** Slots reserved at most this far ahead of the database's now. */
export const HORIZON_MS = 1000;
/**
 * A request is sent at least this long before its second ends (beyond the clock's
 * uncertainty), so that it ARRIVES within that second as the processor counts it: between the
 * slot and the processor's door lie the HTTP client, the connection, the network and, on a
 * busy event loop, a few turns of it. With 1 ms of room (as before), a request sent in the last
 * milliseconds of its second was counted in the next one, on top of that second's own: the
 * local Stripe server, stamping each request as it arrived, counted 101 to 109 in some seconds
 * at 100/s while no second was ever granted more than 100.
 */
export const SEND_MARGIN_MS = 30;
/**
 * No slot in the last GUARD_MS of a second: each has SEND_MARGIN_MS of room to arrive within its
 * own second, and GUARD_MS - SEND_MARGIN_MS for its caller to be woken late (a busy event loop)
 * and still use it. At 100/s the slots of a second are .000 to .950: 96 a second at most.
 */
export const GUARD_MS = 40;
/** Beyond this uncertainty of the clocks' offset (a round trip of more than half a second) a slot is used as it comes: no window could be sure. */
const MOST_UNCERTAIN_MS = 250;
/**
 * Admission: a charge admitted now should wait about this long for its slot. Admitted work is
 * first reserved (a transaction) before it asks for a slot, so as many more are admitted as
 * keep the rate busy over that time (its recent average, at most MOST_RESERVING_S): the room
 * never holds the flow below the rate, and a reserved charge waits about AHEAD_SECONDS.
 */
const AHEAD_SECONDS = 0.5;
const MOST_RESERVING_S = 1.5;

export interface PaceStats {
  /** Statements sent to the database (each reserves a batch, or finds the horizon full). */
  statements: number;
  /** Slots used (take() answered). */
  granted: number;
  /** Slots given up because their caller woke too late to send within the slot's second. */
  late: number;
}

export interface ProcessorPace {
  readonly key: string;
  readonly perSecond: number;
  /** Waits until a request may go: a slot of this key's rate, shared with every process. */
  take(): Promise<void>;
  /** The processor asked us to wait (Retry-After): no slot of this key for anyone before `ms` from now. */
  pause(ms: number): Promise<void>;
  /** Runs `work` (a backoff after a 429) counted as waiting for a slot: admission lets nothing new in meanwhile. */
  hold<T>(work: () => Promise<T>): Promise<T>;
  /** Whether work that will call the processor may start now in this process (room in the half-second admitted ahead). */
  open(): boolean;
  /** Takes that room (check `open` first): freed by this process's next take(), or by the release answered, whichever comes first. */
  admit(): () => void;
  stats(): PaceStats;
}

/** This process's clock, in milliseconds (sub-millisecond precision): the one the pace waits in. */
export const paceNow = (): number => performance.timeOrigin + performance.now();

const wakers = new Set<() => void>();

/** Calls `wake` whenever some pace of this process may have room again (`open`); answers the unsubscribe. */
export function onPaceRoom(wake: () => void): () => void {
  wakers.add(wake);
  return () => wakers.delete(wake);
}

let waking = false;
/** The wakers called once, after what is running now (many grants at once wake them once). */
function wakeSoon(): void {
  if (waking || wakers.size === 0) return;
  waking = true;
  setImmediate(() => {
    waking = false;
    for (const wake of wakers) wake();
  });
}

const paces = new WeakMap<Knex, Map<string, Pace>>();

/**
 * The pace of the processor account `key` at `perSecond` (the processor's documented rate, or
 * the configuration's own): one object per key in a process, shared by every gateway built for
 * it, so that its callers' slots are reserved together. `db` is the pool, never a transaction.
 */
export function processorPace(db: Knex, key: string, perSecond: number): ProcessorPace {
  if (db.isTransaction) throw new Error("A processor's pace is outside our transactions: hand it the pool");
  if (!key || key.length > 200) throw new Error('A pace key is 1 to 200 characters');
  if (!Number.isFinite(perSecond) || perSecond <= 0) throw new Error(`A pace's rate is a positive number of requests per second, not ${perSecond}`);
  let ofDb = paces.get(db);
  if (!ofDb) paces.set(db, (ofDb = new Map()));
  const known = ofDb.get(key);
  if (known) {
    known.perSecond = perSecond;
    return known;
  }
  const pace = new Pace(db, key, perSecond);
  ofDb.set(key, pace);
  return pace;
}

interface Waiter {
  granted: () => void;
  failed: (error: unknown) => void;
}

/** The offset of the database's clock from ours (ms), and how sure it is (± ms), as of `at` (ours). */
interface ClockSample {
  offset: number;
  error: number;
  at: number;
}

/** How much less sure an offset gets per second of age (clocks drift; 50 ppm). */
const DRIFT_MS_PER_S = 0.05;

class Pace implements ProcessorPace {
  /** Callers without a slot yet, first come first. */
  private readonly queue: Waiter[] = [];
  private asking = false;
  private retry: NodeJS.Timeout | undefined;
  private clock: ClockSample | undefined;
  /** Callers in take() not yet answered, and backoffs held (`hold`). */
  private waiting = 0;
  /** Admissions not yet freed (`admit`), oldest first, with when each was admitted. */
  private readonly admitted: { freed: boolean; at: number }[] = [];
  /** How long admitted work has taken to ask for its slot (or to end without one), on average lately (s). */
  private reserving = 0;
  private readonly counts: PaceStats = { statements: 0, granted: 0, late: 0 };

  constructor(
    private readonly db: Knex,
    readonly key: string,
    public perSecond: number,
  ) {}

  stats(): PaceStats {
    return { ...this.counts };
  }

  take(): Promise<void> {
    this.freeOldestAdmission();
    this.waiting += 1;
    return new Promise<void>((granted, failed) => {
      this.queue.push({
        granted: () => {
          this.counts.granted += 1;
          this.done();
          granted();
        },
        failed: (error) => {
          this.done();
          failed(error);
        },
      });
      this.ask();
    });
  }

  async pause(ms: number): Promise<void> {
    await this.db.raw(
      `UPDATE processor_paces SET next_us = greatest(next_us, floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint + ?::bigint), updated_at = now() WHERE key = ?`,
      [Math.round(ms * 1000), this.key],
    );
  }

  async hold<T>(work: () => Promise<T>): Promise<T> {
    this.waiting += 1;
    try {
      return await work();
    } finally {
      this.done();
    }
  }

  open(): boolean {
    const ahead = AHEAD_SECONDS + Math.min(this.reserving, MOST_RESERVING_S);
    return this.waiting + this.admitted.length < Math.max(1, Math.ceil(this.perSecond * ahead));
  }

  admit(): () => void {
    const ticket = { freed: false, at: paceNow() };
    this.admitted.push(ticket);
    return () => {
      if (ticket.freed) return;
      this.freed(ticket);
      this.admitted.splice(this.admitted.indexOf(ticket), 1);
      this.wake();
    };
  }

  /** A take() frees the oldest admission: its work now waits as a caller (counted in `waiting`). */
  private freeOldestAdmission(): void {
    const oldest = this.admitted.shift();
    if (oldest) this.freed(oldest);
  }

  private freed(ticket: { freed: boolean; at: number }): void {
    ticket.freed = true;
    this.reserving += 0.2 * ((paceNow() - ticket.at) / 1000 - this.reserving);
  }

  private done(): void {
    this.waiting -= 1;
    this.wake();
  }

  private wake(): void {
    wakeSoon();
  }

  private get spacingUs(): number {
    return Math.ceil(1_000_000 / this.perSecond);
  }

  /** One statement at a time per key in this process: slots for the callers waiting, a batch of at most a tenth of a second's. */
  private ask(): void {
    if (this.asking || this.retry || this.queue.length === 0) return;
    this.asking = true;
    const wanted = Math.min(this.queue.length, Math.max(1, Math.ceil(this.perSecond / 10)));
    const sent = paceNow();
    this.counts.statements += 1;
    this.db
      .raw<{ rows: { slots: string[]; now_us: string; next_us: string }[] }>('SELECT slots, now_us, next_us FROM processor_pace_take(?, ?, ?, ?, ?)', [
        this.key,
        wanted,
        this.spacingUs,
        GUARD_MS * 1000,
        HORIZON_MS * 1000,
      ])
      .then(
        ({ rows: [row] }) => {
          const received = paceNow();
          this.sample(Number(row!.now_us) / 1000, sent, received);
          const slots = row!.slots.map(Number);
          for (const slot of slots) {
            const waiter = this.queue.shift();
            if (waiter) this.assign(waiter, slot);
          }
          if (slots.length === 0) {
            // The horizon is full (other processes' slots): ask again when it frees.
            const at = this.local(Number(row!.next_us) / 1000 - HORIZON_MS);
            this.retry = setTimeout(() => {
              this.retry = undefined;
              this.ask();
            }, Math.max(1, at - paceNow()));
          }
        },
        (error: unknown) => {
          // The database did not answer: the callers of this batch are told (nothing was sent).
          for (const waiter of this.queue.splice(0, wanted)) waiter.failed(error);
        },
      )
      .finally(() => {
        this.asking = false;
        this.ask();
      });
  }

  /** `waiter` holds the slot at `slotUs` (database time): answered at its time, or back to the front of the queue if woken too late for its second. */
  private assign(waiter: Waiter, slotUs: number): void {
    const clock = this.clock!;
    const uncertainty = clock.error + ((paceNow() - clock.at) / 1000) * DRIFT_MS_PER_S;
    const slotMs = slotUs / 1000;
    const secondEndMs = (Math.floor(slotUs / 1_000_000) + 1) * 1000;
    // Never before the slot (nor so early that it could fall in the second before), never so late that it could arrive after its second ends.
    const from = this.local(slotMs) + uncertainty;
    const until = this.local(secondEndMs) - uncertainty - SEND_MARGIN_MS;
    const fire = () => {
      const now = paceNow();
      if (now < from) {
        setTimeout(fire, from - now);
        return;
      }
      // Too late for its second (or no room to be sure of it): given up, and another taken.
      if (now >= until && uncertainty < MOST_UNCERTAIN_MS) {
        this.counts.late += 1;
        this.queue.unshift(waiter);
        this.ask();
        return;
      }
      waiter.granted();
    };
    setTimeout(fire, Math.max(0, from - paceNow()));
  }

  /** The database's time `dbMs` in this process's clock. */
  private local(dbMs: number): number {
    return dbMs - this.clock!.offset;
  }

  /** Keeps the surer of the known offset (grown less sure with age) and this statement's. */
  private sample(dbMs: number, sent: number, received: number): void {
    const candidate: ClockSample = { offset: dbMs - (sent + received) / 2, error: (received - sent) / 2, at: received };
    const known = this.clock;
    const knownError = known ? known.error + ((received - known.at) / 1000) * DRIFT_MS_PER_S : Infinity;
    if (candidate.error <= knownError) this.clock = candidate;
  }
}
