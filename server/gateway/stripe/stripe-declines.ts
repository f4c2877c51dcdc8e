/**
 * Stripe's decline and ACH failure codes, each mapped to ours: a card decline to one of the
 * documented declines (DECLINE_CODES), an ACH failure to its NACHA return code. Stripe's own code
 * is kept in the message, so support can still see it.
 */
import { DECLINE_MESSAGES, type AchReturnCode, type DeclineCode } from '../gateway';


/** Stripe's decline codes (https://docs.stripe.com/declines/codes) that are not a plain `card_declined`. */
const DECLINES: Record<string, DeclineCode> = {
  insufficient_funds: 'insufficient_funds',
  card_velocity_exceeded: 'insufficient_funds',
  withdrawal_count_exceeded: 'insufficient_funds',
  expired_card: 'expired_card',
  invalid_expiry_month: 'expired_card',
  invalid_expiry_year: 'expired_card',
  incorrect_cvc: 'incorrect_cvc',
  invalid_cvc: 'incorrect_cvc',
  processing_error: 'processing_error',
  issuer_not_available: 'processing_error',
  try_again_later: 'processing_error',
  reenter_transaction: 'processing_error',
};

/**
 * Our decline for Stripe's `decline_code` (or, without one, its error `code`): every other code
 * (`generic_decline`, `do_not_honor`, `fraudulent`, `lost_card`, `stolen_card`,
 * `authentication_required`, …) is `card_declined`.
 */
export function declineOf(stripeCode: string | null | undefined): { code: DeclineCode; message: string } {
  const code = (stripeCode && DECLINES[stripeCode]) || 'card_declined';
  return { code, message: stripeCode && stripeCode !== code ? `${DECLINE_MESSAGES[code]} (${stripeCode})` : DECLINE_MESSAGES[code] };
}

/** Stripe's ACH failure codes (us_bank_account) as NACHA return codes. */
const RETURNS: Record<string, { code: AchReturnCode; message: string }> = {
  insufficient_funds: { code: 'R01', message: 'Insufficient funds.' },
  account_closed: { code: 'R02', message: 'Account closed.' },
  no_account: { code: 'R03', message: 'No account / unable to locate account.' },
  invalid_account_number: { code: 'R04', message: 'Invalid account number.' },
  debit_not_authorized: { code: 'R10', message: 'Customer advises not authorized.' },
  account_frozen: { code: 'R16', message: 'Account frozen.' },
  bank_account_restricted: { code: 'R16', message: 'Account restricted.' },
};

/** The return of an ACH debit that Stripe reports failed with `failureCode`; one it does not name reads as R01 with Stripe's code in the message. */
export function achReturnOf(failureCode: string | null | undefined, failureMessage?: string | null): { code: AchReturnCode; message: string } {
  const known = failureCode ? RETURNS[failureCode] : undefined;
  if (known) return known;
  return { code: 'R01', message: `The bank returned the debit${failureCode ? ` (${failureCode})` : ''}${failureMessage ? `: ${failureMessage}` : '.'}` };
}
