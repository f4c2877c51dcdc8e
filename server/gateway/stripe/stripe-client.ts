/**
 * The official SDK, pointed at STRIPE_API_URL, and what its errors mean to the port.
 *
 * maxNetworkRetries is 0 (the SDK still sends a request again once on a connection reset before
 * any answer, with the same idempotency key, which Stripe answers from its store): the SDK would
 * otherwise resend a request after a timeout or a 5xx (with the same
 * idempotency key, so safely), but each retry waits its own timeout, so "no answer" could come
 * several timeouts late, and the bound after which recovery may look for a lost create (one
 * timeout) would no longer hold; and it would retry a 429 at once, adding to a storm. A request
 * left unanswered is recovered by id instead (stripe-gateway.ts `find`), and a 429 is waited out
 * here, after its Retry-After.
 */
import Stripe from 'stripe';
import { GatewayRateLimited, GatewayRefusal, GatewayUnanswered } from '../gateway';

const clients = new Map<string, Stripe>();

/**
 * One SDK client per key, URL, timeout and pace (they keep their connections). `send`: how each
 * HTTP request goes out, so that the processor's pace takes a slot for every one (a charge is a
 * create and a confirm; a 429 sent again takes another), named by `sendKey`.
 */
export function stripeClient(secretKey: string, apiUrl: string, timeoutMs: number, send?: { key: string; fetch: typeof fetch }): Stripe {
  const key = `${secretKey}\n${apiUrl}\n${timeoutMs}\n${send?.key ?? ''}`;
  let client = clients.get(key);
  if (!client) {
    const url = new URL(apiUrl);
    const protocol = url.protocol === 'http:' ? 'http' : 'https';
    client = new Stripe(secretKey, {
      host: url.hostname,
      port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443,
      protocol,
      timeout: timeoutMs,
      maxNetworkRetries: 0,
      telemetry: false,
      ...(send ? { httpClient: Stripe.createFetchHttpClient(send.fetch) } : {}),
    });
    clients.set(key, client);
  }
  return client;
}

/** How many times a request refused with 429 is sent again, and the longest wait before one. */
const RATE_LIMITED_TRIES = 8;
const MAX_WAIT_MS = 5_000;

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** The wait a 429 asks for (Retry-After, seconds), else exponential backoff with full jitter. */
function waitAfter(error: Stripe.errors.StripeError, attempt: number): number {
  const header = error.headers?.['retry-after'];
  const seconds = header === undefined ? NaN : Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_WAIT_MS);
  return Math.random() * Math.min(MAX_WAIT_MS, 100 * 2 ** attempt);
}

/**
 * Runs one SDK request: a 429 is sent again after its wait, never taken for a decline (after
 * RATE_LIMITED_TRIES, GatewayRateLimited: nothing was done); no answer (a timeout, a dropped
 * connection, a 5xx) is GatewayUnanswered, never a failure by guess; the processor refusing the
 * request itself (a key it does not accept, an object it does not know) is GatewayRefusal.
 * A card error (402) is the caller's: it carries the decline.
 */
export async function stripeCall<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeError)) throw new GatewayUnanswered(`Stripe did not answer: ${(error as Error).message}`);
      if (error instanceof Stripe.errors.StripeCardError) throw error;
      if (error instanceof Stripe.errors.StripeRateLimitError || error.statusCode === 429) {
        if (attempt + 1 >= RATE_LIMITED_TRIES) throw new GatewayRateLimited(`Stripe kept answering 429: ${error.message}`, waitAfter(error, attempt));
        await sleep(waitAfter(error, attempt));
        continue;
      }
      // 409: a request with this idempotency key is still being carried out at Stripe.
      if (error.statusCode === 409) throw new GatewayUnanswered(`Stripe is still carrying out this request: ${error.message}`);
      if (error instanceof Stripe.errors.StripeConnectionError || error instanceof Stripe.errors.StripeAPIError || (error.statusCode ?? 0) >= 500 || error.statusCode === undefined) {
        throw new GatewayUnanswered(`Stripe did not answer: ${error.message}`);
      }
      // The SDK puts the request's id first (`[req_…] `): support finds it in Stripe's logs, the user needs only the reason.
      throw new GatewayRefusal(error.message.replace(/^\[req_[^\]]*\]\s*/, ''));
    }
  }
}
