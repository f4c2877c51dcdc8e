/**
 * A local HTTP server that speaks the part of Stripe's documented API the adapter uses, so the
 * official SDK (pointed here by STRIPE_API_URL) can be tested with no network: balance,
 * customers, payment methods (card, us_bank_account) and their attachment, PaymentIntents
 * (create, confirm, retrieve, list, cancel), refunds; answers shaped on Stripe's published
 * fixtures (../shared/vendor/stripe/fixtures3.json). Like Stripe, it keeps an idempotency store
 * per key (a repeat is answered from it, with `Idempotent-Replayed: true`; other parameters with
 * the same key are a 400), refuses unknown secret keys (401), declines Stripe's test cards with
 * their documented codes, and leaves ACH debits `processing` until a test settles or fails them.
 *
 * Switchable failures: an answer lost after the request was carried out, a storm of 429s, the
 * service down (503) for a while, a card payment left `processing` until a test finishes it. It
 * records every request (method, path, parameters,
 * Idempotency-Key) for tests to assert on, and makes and signs the webhook events Stripe would
 * send (payment_intent.*, charge.dispute.*).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import Stripe from 'stripe';

type Json = Record<string, any>;

/**
 * Stripe's published example objects (stripe/openapi's fixtures3.json, MIT licence, kept with its
 * notice in stripe-fixtures.json): the resources this server answers with, nothing more.
 */
const fixtures = (JSON.parse(readFileSync(join(__dirname, 'stripe-fixtures.json'), 'utf8')) as { resources: Record<string, Json> }).resources;

/** Stripe's example object of `resource`, as a fresh copy. */
function fixture(resource: string): Json {
  return structuredClone(fixtures[resource]!);
}

/** Stripe's test cards that are declined, with the error's code and decline code. */
export const STRIPE_TEST_DECLINES: Record<string, { code: string; decline_code: string; message: string }> = {
  '4000000000000002': { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  '4000000000009995': { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  '4000000000009987': { code: 'card_declined', decline_code: 'lost_card', message: 'Your card was declined.' },
  '4000000000009979': { code: 'card_declined', decline_code: 'stolen_card', message: 'Your card was declined.' },
  '4000000000000069': { code: 'expired_card', decline_code: 'expired_card', message: 'Your card has expired.' },
  '4000000000000127': { code: 'incorrect_cvc', decline_code: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  '4000000000000119': { code: 'processing_error', decline_code: 'processing_error', message: 'An error occurred while processing your card. Try again in a little bit.' },
  '4100000000000019': { code: 'card_declined', decline_code: 'fraudulent', message: 'Your card was declined.' },
};

export interface RecordedRequest {
  method: string;
  /** Without the query string: `/v1/payment_intents/pi_…/confirm`. */
  path: string;
  params: Json;
  idempotencyKey: string | undefined;
  /** Answered from the idempotency store. */
  replayed: boolean;
  /** The status answered; -1 when the answer was held back (a lost answer). */
  status: number;
  /** When it arrived (ms since the epoch): requests per second can be counted from it. */
  at: number;
}

export interface StripeServerOptions {
  /** How long each answer takes (ms), as a real processor's. */
  latencyMs?: number;
}

/** What a request is, by name, for the switchable failures. */
export type Operation = 'balance' | 'customer' | 'payment_method' | 'attach' | 'create' | 'confirm' | 'retrieve' | 'list' | 'cancel' | 'refund';

export interface StripeServer {
  /** `http://127.0.0.1:<port>`: STRIPE_API_URL. */
  url: string;
  /** Every request received, in order (also those refused). */
  requests: RecordedRequest[];
  /** Secret keys accepted (`sk_test_…`); any other is a 401. */
  acceptKey(key: string): void;
  /** The next `times` requests of `operation` are carried out, and their answer never sent (the client times out). */
  loseAnswer(operation: Operation, times?: number): void;
  /** The next `times` requests are answered 429 with `Retry-After` (seconds) and nothing done. */
  rateLimit(times: number, retryAfterSeconds?: number): void;
  /** Every request is answered 503 and nothing done until `up()`. */
  down(): void;
  up(): void;
  /** A PaymentIntent as Stripe holds it. */
  intent(id: string): Json | undefined;
  intents(): Json[];
  /** An ACH debit still `processing` succeeds, or fails with Stripe's failure code (`insufficient_funds`…): the event Stripe would send. */
  settleAch(intentId: string): Json;
  failAch(intentId: string, failureCode: string): Json;
  /** The next `times` card confirms leave their PaymentIntent `processing` (the network answers later). */
  holdCards(times?: number): void;
  /** A card payment still `processing` is declined with Stripe's `declineCode`: the `payment_intent.payment_failed` event Stripe would send. */
  failCard(intentId: string, declineCode: string): Json;
  /** A cardholder disputes a succeeded payment: the dispute, and its `charge.dispute.created` event. */
  dispute(intentId: string, reason?: string): { dispute: Json; event: Json };
  closeDispute(disputeId: string, status: 'won' | 'lost'): Json;
  /** The `payment_intent.succeeded` event of a PaymentIntent (what Stripe sends when one succeeds). */
  succeededEvent(intentId: string): Json;
  /** Posts `event` to `url` signed with `secret` as Stripe does (Stripe-Signature); answers the status. */
  deliver(url: string, secret: string, event: Json, options?: { signature?: string }): Promise<number>;
  close(): Promise<void>;
}

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Stripe's form encoding (`a[b][0]=c`) as nested objects (arrays as objects keyed 0, 1, …). */
function parseForm(text: string): Json {
  const out: Json = {};
  for (const pair of text.split('&').filter(Boolean)) {
    const [rawKey, rawValue = ''] = pair.split('=');
    const key = decodeURIComponent(rawKey!.replace(/\+/g, ' '));
    const value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    const path = key.split(/\]\[|\[|\]/).filter((segment) => segment !== '');
    let node = out;
    path.forEach((segment, index) => {
      if (index === path.length - 1) node[segment] = value;
      else node = node[segment] ??= {};
    });
  }
  return out;
}

const listOf = (value: unknown): string[] => (value && typeof value === 'object' ? Object.values(value as Json) : value ? [value as string] : []);

class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: Json,
  ) {
    super(body.error?.message ?? 'error');
  }
}

const invalid = (message: string, code = 'parameter_invalid', param?: string) =>
  new StripeFailure(400, { error: { type: 'invalid_request_error', code, message, ...(param ? { param } : {}) } });
const missing = (id: string) => new StripeFailure(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such object: '${id}'` } });

export async function startStripeServer(options: StripeServerOptions = {}): Promise<StripeServer> {
  const keys = new Set<string>();
  const requests: RecordedRequest[] = [];
  const customers = new Map<string, Json>();
  const methods = new Map<string, Json & { _number?: string }>();
  const intents = new Map<string, Json>();
  const charges = new Map<string, Json>();
  const refunds = new Map<string, Json>();
  const disputes = new Map<string, Json>();
  const stored = new Map<string, { fingerprint: string; status: number; body: Json }>();
  const lose = new Map<Operation, number>();
  let limited = 0;
  let retryAfter = 0;
  let isDown = false;
  let holdCards = 0;
  const held = new Set<ServerResponse>();

  function chargeOf(intent: Json, status: string, failure?: { code: string; message: string }): Json {
    const charge = fixture('charge');
    Object.assign(charge, {
      id: newId('ch'),
      amount: intent.amount,
      amount_captured: status === 'succeeded' ? intent.amount : 0,
      amount_refunded: 0,
      captured: status === 'succeeded',
      created: now(),
      customer: intent.customer,
      disputed: false,
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
      metadata: intent.metadata,
      paid: status !== 'failed',
      payment_intent: intent.id,
      payment_method: intent.payment_method,
      refunded: false,
      refunds: null,
      status,
    });
    charges.set(charge.id, charge);
    return charge;
  }

  const isAch = (intent: Json) => intent.payment_method_types.includes('us_bank_account');

  function confirm(intent: Json, params: Json): Json {
    if (!['requires_confirmation', 'requires_payment_method'].includes(intent.status) || !intent.payment_method) {
      throw new StripeFailure(400, {
        error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `You cannot confirm this PaymentIntent because it has a status of ${intent.status}.`, payment_intent: intent },
      });
    }
    const method = methods.get(intent.payment_method)!;
    if (isAch(intent)) {
      if (!params.mandate_data) throw invalid('A mandate is required to confirm a us_bank_account PaymentIntent.', 'parameter_missing', 'mandate_data');
      const charge = chargeOf(intent, 'pending');
      Object.assign(intent, { status: 'processing', latest_charge: charge.id, processing: null, last_payment_error: null });
      return intent;
    }
    if (holdCards > 0) {
      // The card network has not answered yet: the payment stays `processing` until a test finishes it.
      holdCards -= 1;
      const charge = chargeOf(intent, 'pending');
      Object.assign(intent, { status: 'processing', latest_charge: charge.id, processing: { type: 'card' }, last_payment_error: null });
      return intent;
    }
    const decline = STRIPE_TEST_DECLINES[method._number ?? ''];
    if (decline) {
      const charge = chargeOf(intent, 'failed', { code: decline.code, message: decline.message });
      const error = { type: 'card_error', code: decline.code, decline_code: decline.decline_code, message: decline.message, charge: charge.id, payment_method: { ...method, _number: undefined } };
      Object.assign(intent, { status: 'requires_payment_method', latest_charge: charge.id, last_payment_error: error });
      throw new StripeFailure(402, { error: { ...error, payment_intent: intent } });
    }
    const charge = chargeOf(intent, 'succeeded');
    Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, latest_charge: charge.id, last_payment_error: null });
    return intent;
  }

  function shown(object: Json): Json {
    const { _number, ...rest } = object;
    void _number;
    return rest;
  }

  function route(method: string, path: string, params: Json): { operation: Operation; run: () => Json } {
    const parts = path.split('/').filter(Boolean);
    if (method === 'GET' && path === '/v1/balance') return { operation: 'balance', run: () => ({ ...fixture('balance'), livemode: false }) };
    if (method === 'POST' && path === '/v1/customers') {
      return {
        operation: 'customer',
        run: () => {
          const customer = Object.assign(fixture('customer'), { id: newId('cus'), created: now(), name: params.name ?? null, email: params.email ?? null, metadata: params.metadata ?? {}, livemode: false, test_clock: null, discount: null });
          customers.set(customer.id, customer);
          return customer;
        },
      };
    }
    if (method === 'POST' && path === '/v1/payment_methods') {
      return {
        operation: 'payment_method',
        run: () => {
          const made: Json & { _number?: string } = Object.assign(fixture('payment_method'), { id: newId('pm'), created: now(), customer: null, livemode: false, metadata: {}, type: params.type });
          made.billing_details = { ...made.billing_details, name: params.billing_details?.name ?? null };
          if (params.type === 'card') {
            const number: string = params.card?.number ?? '';
            if (!/^\d{12,19}$/.test(number)) throw new StripeFailure(402, { error: { type: 'card_error', code: 'incorrect_number', message: 'Your card number is incorrect.' } });
            made.card = { ...made.card, brand: number.startsWith('4') ? 'visa' : number.startsWith('5') ? 'mastercard' : 'unknown', last4: number.slice(-4), exp_month: Number(params.card.exp_month), exp_year: Number(params.card.exp_year) };
            made._number = number;
          } else if (params.type === 'us_bank_account') {
            const bank = params.us_bank_account ?? {};
            if (!params.billing_details?.name) throw invalid('Missing required param: billing_details[name].', 'parameter_missing', 'billing_details[name]');
            delete made.card;
            made.us_bank_account = { account_holder_type: bank.account_holder_type, account_type: bank.account_type, bank_name: 'STRIPE TEST BANK', last4: String(bank.account_number).slice(-4), routing_number: bank.routing_number };
          } else throw invalid(`Invalid type: ${params.type}`, 'parameter_invalid', 'type');
          methods.set(made.id, made);
          return shown(made);
        },
      };
    }
    if (method === 'POST' && parts[1] === 'payment_methods' && parts[3] === 'attach') {
      return {
        operation: 'attach',
        run: () => {
          const made = methods.get(parts[2]!);
          if (!made) throw missing(parts[2]!);
          if (!customers.has(params.customer)) throw missing(params.customer);
          made.customer = params.customer;
          return shown(made);
        },
      };
    }
    if (method === 'POST' && path === '/v1/payment_intents') {
      return {
        operation: 'create',
        run: () => {
          const types = listOf(params.allowed_payment_method_types);
          if (!params.payment_method || !methods.has(params.payment_method)) throw missing(params.payment_method ?? '');
          if (params.customer && !customers.has(params.customer)) throw missing(params.customer);
          const intent = Object.assign(fixture('payment_intent'), {
            id: newId('pi'),
            amount: Number(params.amount),
            amount_received: 0,
            automatic_payment_methods: null,
            canceled_at: null,
            cancellation_reason: null,
            client_secret: `${newId('pi')}_secret_${randomBytes(8).toString('hex')}`,
            created: now(),
            currency: params.currency,
            customer: params.customer ?? null,
            last_payment_error: null,
            latest_charge: null,
            livemode: false,
            metadata: params.metadata ?? {},
            next_action: null,
            payment_method: params.payment_method,
            payment_method_types: types.length > 0 ? types : ['card'],
            processing: null,
            status: 'requires_confirmation',
            transfer_data: null,
          });
          intents.set(intent.id, intent);
          if (params.confirm === 'true') return confirm(intent, params);
          return intent;
        },
      };
    }
    if (parts[1] === 'payment_intents' && parts[2]) {
      const intent = intents.get(parts[2]);
      if (method === 'POST' && parts[3] === 'confirm') {
        return {
          operation: 'confirm',
          run: () => {
            if (!intent) throw missing(parts[2]!);
            return confirm(intent, params);
          },
        };
      }
      if (method === 'POST' && parts[3] === 'cancel') {
        return {
          operation: 'cancel',
          run: () => {
            if (!intent) throw missing(parts[2]!);
            if (['succeeded', 'processing', 'canceled'].includes(intent.status)) {
              throw new StripeFailure(400, { error: { type: 'invalid_request_error', code: 'payment_intent_unexpected_state', message: `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.` } });
            }
            return Object.assign(intent, { status: 'canceled', canceled_at: now(), cancellation_reason: params.cancellation_reason ?? null });
          },
        };
      }
      if (method === 'GET' && !parts[3]) {
        return {
          operation: 'retrieve',
          run: () => {
            if (!intent) throw missing(parts[2]!);
            const expand = listOf(params.expand);
            return expand.includes('latest_charge') && intent.latest_charge ? { ...intent, latest_charge: charges.get(intent.latest_charge) } : intent;
          },
        };
      }
    }
    if (method === 'GET' && path === '/v1/payment_intents') {
      return {
        operation: 'list',
        run: () => {
          const limit = Math.min(Number(params.limit ?? 10), 100);
          let all = [...intents.values()].filter((each) => (!params.customer || each.customer === params.customer) && (!params.created?.gte || each.created >= Number(params.created.gte)));
          all = all.reverse();
          const from = params.starting_after ? all.findIndex((each) => each.id === params.starting_after) + 1 : 0;
          const data = all.slice(from, from + limit);
          return { object: 'list', data, has_more: from + limit < all.length, url: '/v1/payment_intents' };
        },
      };
    }
    if (method === 'POST' && path === '/v1/refunds') {
      return {
        operation: 'refund',
        run: () => {
          const intent = intents.get(params.payment_intent);
          if (!intent) throw missing(params.payment_intent ?? '');
          const charge = charges.get(intent.latest_charge)!;
          if (intent.status !== 'succeeded') throw invalid(`This PaymentIntent (${intent.id}) does not have a successful charge to refund.`, 'charge_not_refundable');
          const amount = params.amount ? Number(params.amount) : charge.amount - charge.amount_refunded;
          if (amount > charge.amount - charge.amount_refunded) throw invalid(`Refund amount ($${amount / 100}) is greater than unrefunded amount on charge ($${(charge.amount - charge.amount_refunded) / 100})`, 'amount_too_large', 'amount');
          charge.amount_refunded += amount;
          charge.refunded = charge.amount_refunded === charge.amount;
          const refund = Object.assign(fixture('refund'), { id: newId('re'), amount, charge: charge.id, created: now(), payment_intent: intent.id, status: 'succeeded', metadata: {}, reason: null });
          refunds.set(refund.id, refund);
          return refund;
        },
      };
    }
    throw new StripeFailure(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://stripe.local');
    const method = req.method ?? 'GET';
    const params = method === 'GET' ? parseForm(url.search.slice(1)) : parseForm(Buffer.concat(chunks).toString('utf8'));
    const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
    const record: RecordedRequest = { method, path: url.pathname, params, idempotencyKey, replayed: false, status: 0, at: Date.now() };
    if (options.latencyMs) await new Promise((done) => setTimeout(done, options.latencyMs));
    requests.push(record);
    const answer = (status: number, body: Json, headers: Record<string, string> = {}) => {
      record.status = status;
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req'), ...headers });
      res.end(JSON.stringify(body));
    };
    const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!keys.has(key)) {
      answer(401, { error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` } });
      return;
    }
    if (isDown) {
      answer(503, { error: { type: 'api_error', message: 'Stripe is temporarily unavailable.' } });
      return;
    }
    if (limited > 0) {
      limited -= 1;
      answer(429, { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' } }, { 'retry-after': String(retryAfter) });
      return;
    }
    const storeKey = idempotencyKey && method === 'POST' ? `${key}\n${idempotencyKey}` : undefined;
    const fingerprint = `${url.pathname}\n${JSON.stringify(params)}`;
    let routed: ReturnType<typeof route> | undefined;
    let status = 200;
    let body: Json;
    const headers: Record<string, string> = idempotencyKey ? { 'idempotency-key': idempotencyKey } : {};
    try {
      routed = route(method, url.pathname, params);
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error;
      answer(error.status, error.body);
      return;
    }
    const earlier = storeKey ? stored.get(storeKey) : undefined;
    if (earlier) {
      record.replayed = true;
      if (earlier.fingerprint !== fingerprint) {
        answer(400, {
          error: { type: 'idempotency_error', message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.` },
        });
        return;
      }
      ({ status, body } = earlier);
      headers['idempotent-replayed'] = 'true';
    } else {
      try {
        body = routed.run();
      } catch (error) {
        if (!(error instanceof StripeFailure)) throw error;
        status = error.status;
        body = error.body;
      }
      // Stripe keeps the answer of a POST with a key, success or error (not a 429 or a 5xx).
      if (storeKey) stored.set(storeKey, { fingerprint, status, body: structuredClone(body) });
    }
    const toLose = lose.get(routed.operation) ?? 0;
    if (toLose > 0) {
      // Carried out (or answered from the store), and never answered: the client gives up at its
      // timeout. (A connection dropped at once is not a lost answer: the SDK sends the request
      // again on a reset connection, with the same key, and is answered from the store.)
      lose.set(routed.operation, toLose - 1);
      record.status = -1;
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    answer(status, body, headers);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'api_error', message: (error as Error).message } }));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  function event(type: string, object: Json): Json {
    return Object.assign(fixture('event'), {
      id: newId('evt'),
      api_version: '2026-11-18.endive',
      created: now(),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(object) },
    });
  }

  const signer = new Stripe('sk_test_signer', { telemetry: false });

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    acceptKey: (key) => void keys.add(key),
    loseAnswer: (operation, times = 1) => void lose.set(operation, times),
    rateLimit: (times, retryAfterSeconds = 0) => {
      limited = times;
      retryAfter = retryAfterSeconds;
    },
    down: () => void (isDown = true),
    up: () => void (isDown = false),
    intent: (id) => intents.get(id),
    intents: () => [...intents.values()],
    settleAch(intentId) {
      const intent = intents.get(intentId)!;
      Object.assign(intent, { status: 'succeeded', amount_received: intent.amount });
      Object.assign(charges.get(intent.latest_charge)!, { status: 'succeeded', captured: true, amount_captured: intent.amount });
      return event('payment_intent.succeeded', intent);
    },
    holdCards: (times = 1) => void (holdCards = times),
    failCard(intentId, declineCode) {
      const intent = intents.get(intentId)!;
      const message = 'Your card was declined.';
      const error = { type: 'card_error', code: 'card_declined', decline_code: declineCode, message, charge: intent.latest_charge };
      Object.assign(intent, { status: 'requires_payment_method', processing: null, last_payment_error: error });
      Object.assign(charges.get(intent.latest_charge)!, { status: 'failed', failure_code: 'card_declined', failure_message: message });
      return event('payment_intent.payment_failed', intent);
    },
    failAch(intentId, failureCode) {
      const intent = intents.get(intentId)!;
      const message = `The bank returned the debit (${failureCode}).`;
      Object.assign(intent, { status: 'requires_payment_method', last_payment_error: { type: 'invalid_request_error', code: failureCode, message } });
      Object.assign(charges.get(intent.latest_charge)!, { status: 'failed', failure_code: failureCode, failure_message: message });
      return event('payment_intent.payment_failed', intent);
    },
    dispute(intentId, reason = 'fraudulent') {
      const intent = intents.get(intentId)!;
      const dispute = Object.assign(fixture('dispute'), {
        id: newId('dp'),
        amount: intent.amount_received,
        balance_transactions: [],
        charge: intent.latest_charge,
        created: now(),
        livemode: false,
        metadata: {},
        payment_intent: intent.id,
        reason,
        status: 'needs_response',
      });
      disputes.set(dispute.id, dispute);
      charges.get(intent.latest_charge)!.disputed = true;
      return { dispute, event: event('charge.dispute.created', dispute) };
    },
    closeDispute(disputeId, status) {
      const dispute = disputes.get(disputeId)!;
      dispute.status = status;
      return event('charge.dispute.closed', dispute);
    },
    succeededEvent: (intentId) => event('payment_intent.succeeded', intents.get(intentId)!),
    async deliver(url, secret, sent, options = {}) {
      const payload = JSON.stringify(sent);
      const signature = options.signature ?? signer.webhooks.generateTestHeaderString({ payload, secret });
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload });
      await response.arrayBuffer();
      return response.status;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
