import type { Knex } from 'knex';
import type { Config } from '../kernel/config';
import type { SecretBox } from '../crypto/secrets';
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
 *
 * The promise of `find`: once it answers "never received", the key is spent and a request with
 * it still on its way can never take money. Each adapter keeps it in its own way:
 * - The simulator (sandbox-gateway.ts) records the key as given up in its ledger; a late
 *   request with it is refused.
 * - Stripe (stripe/stripe-gateway.ts) makes it true by construction, since Stripe keeps no such
 *   promise for a request in flight: the PaymentIntent is created unconfirmed (idempotent, our
 *   key as Idempotency-Key), its id is recorded on the `processing` charge
 *   (`ChargeOptions.recordReference`, which refuses once the charge is finished), and only then
 *   confirmed. `find` retrieves it by that id and cancels one still unconfirmed (a canceled
 *   PaymentIntent cannot be confirmed); with no id recorded it lists the recent PaymentIntents
 *   (the customer's when known) for our id in their metadata, and only once the SDK's timeout
 *   has passed on both sends of the create (a lost create is sent once more with the same key,
 *   which Stripe answers from its idempotency store) since the charge was reserved (`FindHints.reservedAt`), so that a create still in
 *   flight has either answered or been given up on, never confirmed. Recovery records "never
 *   received" only while the charge still has no id recorded (charge-steps.ts, `ifReference`).
 * - Authorize.net has no idempotency key: its adapter sends our id as `invoiceNumber` with a
 *   `duplicateWindow`, and answers "never received" only after the window and the request's
 *   timeout have passed and its unsettled and settled lists show nothing for that invoice; a
 *   transaction that shows up later is recorded, or voided when its reservation was released.
 */

/** Why a card charge was declined: the errorCode the API answers. */
export const DECLINE_CODES = ['card_declined', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'processing_error'] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

/** Our documented message of each decline, whichever processor declined (its own text may follow). */
export const DECLINE_MESSAGES: Record<DeclineCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: "The card's security code is incorrect.",
  processing_error: 'An error occurred while processing the card.',
};

/** NACHA return codes the sandbox produces. */
export const ACH_RETURN_CODES = ['R01', 'R02', 'R03', 'R10'] as const;

type Digit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9';
/**
 * Any NACHA return code (`R` and two digits: R01–R85, the R80s being IAT's), as a processor
 * reports it: kept as it was said, not narrowed to the ones we describe.
 */
export type AchReturnCode = `R${Digit}${Digit}`;
export const ACH_RETURN_CODE = /^R[0-9]{2}$/;

/** What the common return codes mean (NACHA Operating Rules, Appendix Four): the message of a return a processor gave no words for. */
export const ACH_RETURN_REASONS: Partial<Record<AchReturnCode, string>> = {
  R01: 'Insufficient funds.',
  R02: 'Account closed.',
  R03: 'No account / unable to locate account.',
  R04: 'Invalid account number.',
  R05: 'Unauthorized debit to consumer account using corporate SEC code.',
  R06: 'Returned per ODFI request.',
  R07: 'Authorization revoked by customer.',
  R08: 'Payment stopped.',
  R09: 'Uncollected funds.',
  R10: 'Customer advises not authorized.',
  R16: 'Account frozen.',
  R20: 'Non-transaction account.',
  R29: 'Corporate customer advises not authorized.',
};

/** A processor's return code as ours: a NACHA code as it was said, anything else (or none) `fallback`. */
export function achReturnCodeOf(code: string | null | undefined, fallback: AchReturnCode = 'R01'): AchReturnCode {
  const upper = code?.trim().toUpperCase();
  return upper && ACH_RETURN_CODE.test(upper) ? (upper as AchReturnCode) : fallback;
}

/** The message of a return: the processor's own words, else ours for the code, else a plain sentence. */
export function achReturnMessage(code: AchReturnCode, said?: string | null): string {
  return said || ACH_RETURN_REASONS[code] || `The bank returned the debit (${code}).`;
}

export interface CardDetails {
  number: string;
  expMonth: number;
  /** Four digits. */
  expYear: number;
}

export interface BankAccountDetails {
  routingNumber: string;
  accountNumber: string;
  /** The holder's name and the account's type, for processors that need them (Stripe's us_bank_account). */
  holderName?: string;
  accountType?: 'checking' | 'savings';
}

/** Whose method is tokenized: a processor that keeps customers (Stripe) saves it under theirs. */
export interface PaymentOwner {
  /** Our customer's id. */
  customerId: string;
  name: string;
  email?: string | null;
}

/** What a charge may tell the gateway beyond its token, amount and key. */
export interface ChargeOptions {
  /** No payer present (a scheduled charge, an instalment, autopay): Stripe's `off_session`. */
  offSession?: boolean;
  /**
   * Records the processor's id of the payment with the `processing` charge before the payment is
   * confirmed; answers false when the charge was finished meanwhile (then nothing is confirmed).
   */
  recordReference?: (reference: string) => Promise<boolean>;
}

/** What we know of a charge when we ask `find` about it. */
export interface FindHints {
  /** The processor's id of the payment, when recorded before its answer was lost. */
  reference?: string | null;
  /** When the charge was reserved (before the gateway was first asked). */
  reservedAt?: Date;
  /** Our customer's id. */
  customerId?: string;
}

export type ChargeOutcome =
  | { status: 'succeeded'; reference: string }
  /** An ACH debit: ask `outcome(reference)` again after `checkAfterSeconds`. */
  | { status: 'pending'; reference: string; checkAfterSeconds: number }
  | { status: 'failed'; reference: string; code: DeclineCode; message: string };

/**
 * What became of a payment answered `pending` (an ACH debit, a card held by the processor's
 * fraud filters): still pending, settled, returned by the bank (ACH), or failed after all (a
 * held card declined once reviewed, a card payment the processor reports failed): a decline,
 * the money never taken.
 */
export type LaterOutcome =
  | { status: 'pending'; checkAfterSeconds: number }
  | { status: 'settled' }
  | { status: 'returned'; code: AchReturnCode; message: string }
  | { status: 'failed'; code: DeclineCode; message: string };

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
  tokenizeCard(card: CardDetails, owner?: PaymentOwner): Promise<string>;
  tokenizeBankAccount(account: BankAccountDetails, owner?: PaymentOwner): Promise<string>;
  /** Charges `amount` to the token; `idempotencyKey` (the charge's id) makes a repeat the same request. */
  charge(token: string, amount: number, idempotencyKey: string, options?: ChargeOptions): Promise<ChargeOutcome>;
  void(reference: string, idempotencyKey: string): Promise<void>;
  refund(reference: string, amount: number, idempotencyKey: string): Promise<void>;
  /**
   * What became of the charge sent with `idempotencyKey`: its outcome, or undefined when the
   * gateway never received it. After an undefined answer the key is spent: a request with it
   * that arrives later is refused, so an attempt we gave up on can never take money afterwards.
   */
  find(idempotencyKey: string, hints?: FindHints): Promise<ChargeOutcome | undefined>;
  outcome(reference: string): Promise<LaterOutcome>;
}

/** What the dispatch (gateways.ts) and every adapter are built from. */
export interface GatewayDeps {
  db: Knex;
  config: Config;
  secrets: SecretBox;
}
