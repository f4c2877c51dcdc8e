/**
 * Any gateway at its processor's pace: every call to the processor takes a slot of the
 * account's pace first (processor-pace.ts, shared by every process). A "too many requests"
 * (`GatewayRateLimited`, HTTP 429: nothing was done) is sent again after its Retry-After (which
 * also holds back every process's next slots of the account), else after an exponential backoff
 * with full jitter; it is never answered as a decline. After `maxWaitMs` of 429s the request is
 * answered `GatewayUnanswered`: a charge stays `processing` and recovery asks the processor
 * later (charge-recovery.ts), never `failed` by our guess. Everything else (an answer, a
 * decline, `GatewayUnanswered` for a timeout or a 5xx, `GatewayRefusal`) passes through as the
 * adapter said it.
 *
 * The default `maxWaitMs` (60 s) stays below CHARGE_RECOVERY_AFTER_SECONDS (120 s by default):
 * recovery does not ask about a charge while its request is still being retried here.
 */
import { GatewayRateLimited, GatewayUnanswered, type PaymentGateway } from './gateway';
import type { ProcessorPace } from './processor-pace';

export interface PacedOptions {
  /** How long a request may be retried after 429s before it is answered unanswered (from its first try). */
  maxWaitMs?: number;
  /** The first backoff's ceiling when the processor gave no Retry-After; doubled at each retry. */
  baseBackoffMs?: number;
  /** The ceiling of any one backoff. */
  maxBackoffMs?: number;
  /** In [0, 1): the jitter (tests pin it). */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /**
   * `per-call` (the default): each call of the port takes one slot (an adapter that sends one
   * request per call: the simulator, Authorize.net's charge). `per-request`: the adapter takes a
   * slot for each HTTP request it sends (`pacedFetch`, or `pace.take()` before each), and this
   * wrapper only waits out 429s.
   */
  slots?: 'per-call' | 'per-request';
}

export interface PacedGateway extends PaymentGateway {
  readonly pace: ProcessorPace;
}

export const PACED_DEFAULTS = { maxWaitMs: 60_000, baseBackoffMs: 250, maxBackoffMs: 8_000 } as const;

const realSleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** The pace a gateway is called at, when it is a paced one (the due work admits its charges by it). */
export function paceOf(gateway: PaymentGateway | undefined): ProcessorPace | undefined {
  return gateway && 'pace' in gateway ? (gateway as PacedGateway).pace : undefined;
}

/** The port's calls that reach the processor: each takes a slot, when slots are taken per call. */
const PROCESSOR_CALLS = new Set<PropertyKey>(['tokenizeCard', 'tokenizeBankAccount', 'charge', 'void', 'refund', 'find', 'outcome']);

export function pacedGateway(gateway: PaymentGateway, pace: ProcessorPace, options: PacedOptions = {}): PacedGateway {
  const { maxWaitMs, baseBackoffMs, maxBackoffMs } = { ...PACED_DEFAULTS, ...options };
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  const perCall = (options.slots ?? 'per-call') === 'per-call';

  /** `request` (at the pace, when `slot`), sent again after each 429 until it is answered or `maxWaitMs` has passed. */
  async function paced<T>(request: () => Promise<T>, slot: boolean): Promise<T> {
    const started = now();
    for (let retry = 0; ; retry += 1) {
      if (slot) {
        try {
          await pace.take();
        } catch (error) {
          throw new GatewayUnanswered(`The processor's pace could not be read (${(error as Error).message}); the request was not sent.`);
        }
      }
      try {
        return await request();
      } catch (error) {
        if (!(error instanceof GatewayRateLimited)) throw error;
        // Full jitter: anywhere up to the doubled ceiling, so that callers refused together spread out.
        const wait = error.retryAfterMs ?? Math.floor(random() * Math.min(maxBackoffMs, baseBackoffMs * 2 ** retry));
        const waited = now() - started;
        if (waited + wait > maxWaitMs) {
          throw new GatewayUnanswered(`The processor answered "too many requests" for ${Math.round(waited / 1000)} s (${error.message}); asked again later, not failed.`);
        }
        // The processor's own Retry-After holds back every process's next slots of this account.
        if (error.retryAfterMs !== undefined) await pace.pause(error.retryAfterMs).catch(() => undefined);
        await pace.hold(() => sleep(wait));
      }
    }
  }

  // The port's calls to the processor are retried after 429s, each taking a slot unless the
  // adapter takes one per HTTP request itself; anything else the adapter has passes through
  // as it is (all its arguments too, whatever the port grows).
  return new Proxy(gateway, {
    has: (target, property) => property === 'pace' || Reflect.has(target, property),
    get(target, property, receiver) {
      if (property === 'pace') return pace;
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => Promise<unknown>;
      if (!PROCESSOR_CALLS.has(property)) return method.bind(target);
      return (...args: unknown[]) => paced(() => method.apply(target, args), perCall);
    },
  }) as PacedGateway;
}

/**
 * `fetch` at the pace: each HTTP request takes a slot before it goes. For an adapter that sends
 * several requests per call (Stripe: a PaymentIntent created, then confirmed), given to its
 * client (`new Stripe(key, { httpClient: Stripe.createFetchHttpClient(pacedFetch(pace)) })`),
 * with `pacedGateway(adapter, pace, { slots: 'per-request' })` around it.
 */
export function pacedFetch(pace: ProcessorPace, fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    await pace.take();
    return fetchImpl(input, init);
  };
}
