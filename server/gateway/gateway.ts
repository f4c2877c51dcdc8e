/**
 * The payment gateway port: the only way money moves. A gateway keeps card and bank numbers
 * in its own vault and hands back a token; we charge, void and refund by token and by the
 * gateway's reference, and ask it later how a pending (ACH) payment ended. The built-in
 * implementation is the sandbox simulator; a real gateway plugs in behind the same interface.
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

export interface PaymentGateway {
  /** The name stored with each charge (`sandbox`). */
  readonly name: string;
  tokenizeCard(card: CardDetails): Promise<string>;
  tokenizeBankAccount(account: BankAccountDetails): Promise<string>;
  charge(token: string, amount: number): Promise<ChargeOutcome>;
  void(reference: string): Promise<void>;
  refund(reference: string, amount: number): Promise<void>;
  outcome(reference: string): Promise<LaterOutcome>;
}
