/**
 * One HTTP attempt of a delivery: POST the exact bytes, no redirects (node's http never
 * follows them), an answer within the timeout or it is a failure. Connections are kept alive
 * per endpoint, so a busy endpoint costs one TLS handshake, not one per event.
 *
 * A kept-alive connection can be closed by the endpoint (its idle timeout: 5 s in Node's http
 * server) just as our next request goes out on it: the request fails with a reset before any
 * answer, through no fault of the endpoint, and would wait for the next attempt (15 minutes).
 * So a request that fails that way on a reused connection is sent again at once, on a new one,
 * within the same attempt and its timeout (Node's documented remedy, `request.reusedSocket`);
 * the endpoint cannot have answered it, and a receiver dedupes by `webhook-id` in any case.
 */
import http from 'node:http';
import https from 'node:https';
import { deliveryUrlProblem, pinnedLookup } from './url-safety';

export interface AttemptResult {
  ok: boolean;
  /** The answer's status; null when there was none. */
  status: number | null;
  /** Why the attempt failed; null when it succeeded. */
  error: string | null;
  /** A 429 or 503 with a usable Retry-After: the seconds it asks for, at most an hour. */
  retryAfterSeconds?: number;
}

/** The longest wait a Retry-After may ask for; beyond it, we come back after an hour. */
export const MAX_RETRY_AFTER_SECONDS = 3600;

/** Retry-After as seconds (RFC 9110: delay-seconds or an HTTP-date); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  let seconds: number;
  if (/^\d+$/.test(text)) seconds = Number(text);
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.ceil((at - now) / 1000);
  }
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds));
}

// No limit of connections per host here: the worker's limits (attempts in flight per webhook,
// and per process) bound them. A limit per host would be shared by every webhook on that host
// (two organizations' endpoints at one provider), and one's slow answers would queue the
// other's attempts behind them.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: Infinity }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: Infinity }),
};
const pinned = pinnedLookup();

export interface SendOptions {
  timeoutMs: number;
  /** WEBHOOK_ALLOW_INSECURE_URLS: http and any address allowed (local testing only). */
  allowInsecure: boolean;
}

export function postWebhook(rawUrl: string, headers: Record<string, string>, body: Buffer, options: SendOptions): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.resolve({ ok: false, status: null, error: 'refused: not a URL' });
  }
  const refused = options.allowInsecure ? undefined : deliveryUrlProblem(url);
  if (refused) return Promise.resolve({ ok: false, status: null, error: refused });
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') return Promise.resolve({ ok: false, status: null, error: 'refused: not an http(s) URL' });

  return new Promise((settle) => {
    let settled = false;
    let request: http.ClientRequest;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      settle(result);
    };
    // The answer must start within the timeout, resends on a new connection included.
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    const send = (resendsLeft: number) => {
      request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: agents[secure ? 'https:' : 'http:'],
        headers: { ...headers, 'Content-Length': String(body.length) },
        // The checked address is the one connected to (see url-safety.ts).
        ...(options.allowInsecure ? {} : { lookup: pinned }),
      });
      let answered = false;
      request.on('response', (response) => {
        answered = true;
        clearTimeout(timer);
        // The body is ignored; one that never ends must not keep the connection forever.
        const drain = setTimeout(() => response.destroy(), options.timeoutMs);
        response.on('close', () => clearTimeout(drain));
        response.resume();
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) finish({ ok: true, status, error: null });
        else if (status >= 300 && status < 400) finish({ ok: false, status, error: `redirect (${status}) not followed` });
        else if (status === 429 || status === 503) {
          const header = response.headers['retry-after'];
          finish({ ok: false, status, error: `answered ${status}`, retryAfterSeconds: retryAfterSeconds(Array.isArray(header) ? header[0] : header) });
        } else finish({ ok: false, status, error: `answered ${status}` });
      });
      const sentOn = request;
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        if (!answered && sentOn.reusedSocket && error.code === 'ECONNRESET' && resendsLeft > 0) return send(resendsLeft - 1);
        finish({ ok: false, status: null, error: error.message.slice(0, 1000) || 'connection failed' });
      });
      request.end(body);
    };
    send(RESENDS_ON_CLOSED_CONNECTIONS);
  });
}

/** Kept-alive connections found closed, one after another, before the attempt fails (each resend that meets one takes another). */
const RESENDS_ON_CLOSED_CONNECTIONS = 3;
