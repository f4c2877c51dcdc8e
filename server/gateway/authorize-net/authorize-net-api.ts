/**
 * Authorize.net's documented JSON API (one URL; the request's root element names the method),
 * posted with Node's fetch. Not through the official `authorizenet` package (1.0.10), which
 * stands in the way three times over:
 * - its `execute(callback)` never calls back when the request fails (a timeout, a 5xx, a 429):
 *   it only stores the error on the controller, so a processor that is down would hang every
 *   charge instead of leaving it `processing` for recovery;
 * - every contract object and controller it builds registers a new winston logger under a random
 *   name that is never released: measured 112 KB of heap kept per charge request built with its
 *   contract classes (18,000 loggers for 2,000 requests), 25 KB with its controllers alone, so a
 *   month-end run of 20,000 instalments would keep 0.5 to 2.2 GB;
 * - its timeout is one module-wide setting, replaced by whichever controller was built last.
 * The requests here are the shapes of its contract classes, element for element and in the
 * schema's order (the API reads JSON as XML: order matters); the tests check them against the
 * package's classes and run its controllers against the local server.
 */
import { GatewayRateLimited, GatewayUnanswered } from '../gateway';

export interface AuthorizeNetCredentials {
  apiLoginId: string;
  transactionKey: string;
  signatureKey: string;
}

/** Authorize.net's hosts: its sandbox (test accounts) and production. */
export const AUTHORIZE_NET_URLS = {
  sandbox: 'https://apitest.authorize.net/xml/v1/request.api',
  production: 'https://api.authorize.net/xml/v1/request.api',
} as const;

export interface ApiMessages {
  resultCode: 'Ok' | 'Error';
  message: { code: string; text: string }[];
}

/** Every answer carries `messages`; the rest depends on the method. */
export interface ApiAnswer {
  refId?: string;
  messages: ApiMessages;
  [field: string]: unknown;
}

/** The processor answered the request with an error of its own (`messages.resultCode` Error). */
export class AuthorizeNetError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly answer: ApiAnswer,
  ) {
    super(message);
  }
}

/** API errors that say the processor could not carry the request out now, not that it refused it. */
const UNAVAILABLE = new Set(['E00001', 'E00104']);

export interface ApiClient {
  /** Posts `{ [method]: { merchantAuthentication, ...body } }`; answers the processor's answer, `Ok` or not. */
  post(method: string, body: Record<string, unknown>): Promise<ApiAnswer>;
}

export function apiClient(credentials: Pick<AuthorizeNetCredentials, 'apiLoginId' | 'transactionKey'>, apiUrl: string, timeoutMs: number, send: typeof fetch = fetch): ApiClient {
  return {
    async post(method, body) {
      const request = { [method]: { merchantAuthentication: { name: credentials.apiLoginId, transactionKey: credentials.transactionKey }, ...body } };
      let response: Response;
      try {
        response = await send(apiUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(request),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        // A timeout or a dropped connection: the request may or may not have been carried out.
        throw new GatewayUnanswered(`Authorize.net did not answer ${method}: ${(error as Error).message}`);
      }
      if (response.status === 429) {
        await response.body?.cancel();
        throw new GatewayRateLimited('Authorize.net answered 429 (too many requests).', retryAfterMs(response.headers.get('retry-after')));
      }
      if (response.status >= 500) {
        await response.body?.cancel();
        throw new GatewayUnanswered(`Authorize.net answered HTTP ${response.status} to ${method}.`);
      }
      let answer: ApiAnswer;
      try {
        // Its JSON starts with a byte-order mark.
        answer = JSON.parse((await response.text()).replace(/^\uFEFF/, '')) as ApiAnswer;
      } catch (error) {
        throw new GatewayUnanswered(`Authorize.net's answer to ${method} could not be read: ${(error as Error).message}`);
      }
      if (!answer?.messages) throw new GatewayUnanswered(`Authorize.net answered HTTP ${response.status} to ${method} without messages.`);
      const first = answer.messages.message?.[0];
      if (answer.messages.resultCode === 'Error' && first && UNAVAILABLE.has(first.code)) {
        throw new GatewayUnanswered(`Authorize.net could not carry out ${method} now: ${first.code} ${first.text}`);
      }
      return answer;
    },
  };
}

/** Throws the processor's own words when `answer` is an error; for the methods whose errors are all refusals. */
export function expectOk(answer: ApiAnswer): ApiAnswer {
  if (answer.messages.resultCode !== 'Ok') {
    const first = answer.messages.message?.[0];
    throw new AuthorizeNetError(first?.code ?? 'unknown', first?.text ?? 'Authorize.net refused the request.', answer);
  }
  return answer;
}

/** Retry-After in seconds or as an HTTP date, in milliseconds. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Our cents as the processor's decimal dollars ("15.00"). */
export function dollars(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** The processor's decimal dollars (a number or a string) as our cents. */
export function cents(amount: unknown): number {
  return Math.round(Number(amount) * 100);
}
