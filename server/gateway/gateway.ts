/**
 * The payment gateway port: the only way money moves. A gateway keeps card and bank numbers
 * in its own vault and hands back a token; we charge, void and refund by token and by the
 * gateway's reference, and ask it later how a pending (ACH) payment ended. The built-in
 * implementation is the sandbox simulator; a real gateway plugs in behind the same interface.
 *
 * A gateway is slow and outside our transactions: it is never asked while a transaction or a
 * connection of ours is held. Every request that moves money carries an idempotency key we
 * choose (a charge's is the charge's id): the gateway treats a repeat as the same request and
 * answers what it did the first time, so a request whose answer was lost can be sent again, or
 * looked up with `find`.
 */

/** Why a card charge was declined: the errorCode the API answers. */
export const DECLINE_CODES = ['card_declined', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'processing_error'] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

/** NACHA return codes the sandbox produces. */
export const ACH_RETURN_CODES = ['R01', 'R02', 'R03', 'R10'] as const;
export type AchReturnCode = (typeof ACH_RETURN_CODES)[number];

export interface CardDetails {
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
}

export interface BankAccountDetails {
  routingNumber: string;
  accountNumber: string;
}

export type ChargeOutcome =
  | { status: 'succeeded'; reference: string }
  /** An ACH debit: ask `outcome(reference)` again after `checkAfterSeconds`. */
  | { status: 'pending'; reference: string; checkAfterSeconds: number }
  | { status: 'failed'; reference: string; code: DeclineCode; message: string };

export type LaterOutcome =
  | { status: 'pending'; checkAfterSeconds: number }
  | { status: 'settled' }
  | { status: 'returned'; code: AchReturnCode; message: string };

/** The gateway refused a void or refund (the payment is not in a state that allows it). */
export class GatewayRefusal extends Error {}

/**
 * No answer came (a timeout, a dropped connection): the request may or may not have been
 * carried out. Never a decline: ask `find(key)` later.
 */
export class GatewayUnanswered extends Error {}

/**
 * The processor said "too many requests" (HTTP 429): nothing was done. Retried after
 * `retryAfterMs` (its Retry-After) or with backoff and jitter, never answered as a decline.
 */
export class GatewayRateLimited extends Error {
  constructor(message: string, readonly retryAfterMs?: number) {
    super(message);
  }
}

export interface PaymentGateway {
  /** The name stored with each charge (`sandbox`). */
  readonly name: string;
  tokenizeCard(card: CardDetails): Promise<string>;
  tokenizeBankAccount(account: BankAccountDetails): Promise<string>;
  /** Charges `amount` to the token; `idempotencyKey` (the charge's id) makes a repeat the same request. */
  charge(token: string, amount: number, idempotencyKey: string): Promise<ChargeOutcome>;
  void(reference: string, idempotencyKey: string): Promise<void>;
  refund(reference: string, amount: number, idempotencyKey: string): Promise<void>;
  /**
   * What became of the charge sent with `idempotencyKey`: its outcome, or undefined when the
   * gateway never received it. After an undefined answer the key is spent: a request with it
   * that arrives later is refused, so an attempt we gave up on can never take money afterwards.
   */
  find(idempotencyKey: string): Promise<ChargeOutcome | undefined>;
  outcome(reference: string): Promise<LaterOutcome>;
}
