/**
 * What Authorize.net's codes mean to us: its response reason codes as our declines, its
 * transaction statuses as our outcomes, and the 20 characters it keeps of our ids.
 */
import { createHash } from 'node:crypto';
import type { DeclineCode } from '../gateway';

/**
 * Our id as Authorize.net's `invoiceNumber` and `refId`, which hold at most 20 characters: a
 * charge's id (a UUID) as its first 20 hex digits (76 random bits: two charges of one merchant
 * account never share them), which an agency types into the Merchant Interface's search to find
 * the charge; any other key (`void:…`, a refund's) as 20 hex digits of its SHA-256.
 */
export function invoiceNumberOf(key: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)) return key.replace(/-/g, '').slice(0, 20).toLowerCase();
  return createHash('sha256').update(key).digest('hex').slice(0, 20);
}

/** The transaction response's `responseCode`. */
export const RESPONSE = { approved: '1', declined: '2', error: '3', heldForReview: '4' } as const;

/** Reason 11: the same transaction again within the duplicate window (answered with the first one's transId). */
export const DUPLICATE_REASON = '11';

/**
 * Response reason codes as our declines. Authorize.net has no code for insufficient funds: the
 * issuer's "insufficient funds" comes back as the general decline (2), so `insufficient_funds`
 * is never answered for it; a reason not listed is `card_declined` when declined (response 2)
 * and `processing_error` when an error (response 3).
 */
const REASONS: Record<string, DeclineCode> = {
  // Declined by the issuer, a card to pick up, a referral, AVS or fraud filters.
  '2': 'card_declined',
  '3': 'card_declined',
  '4': 'card_declined',
  '27': 'card_declined',
  '127': 'card_declined',
  '141': 'card_declined',
  '145': 'card_declined',
  '250': 'card_declined',
  '251': 'card_declined',
  '254': 'card_declined',
  // An invalid or unsupported card number, a bad expiration date.
  '6': 'card_declined',
  '17': 'card_declined',
  '28': 'card_declined',
  '37': 'card_declined',
  '7': 'expired_card',
  '8': 'expired_card',
  // The card code (CVV) did not match.
  '44': 'incorrect_cvc',
  '45': 'incorrect_cvc',
  '65': 'incorrect_cvc',
  '165': 'incorrect_cvc',
  // The processor or its network failed: "try again".
  '19': 'processing_error',
  '20': 'processing_error',
  '21': 'processing_error',
  '22': 'processing_error',
  '23': 'processing_error',
  '25': 'processing_error',
  '26': 'processing_error',
  '35': 'processing_error',
  '57': 'processing_error',
  '58': 'processing_error',
  '59': 'processing_error',
  '60': 'processing_error',
  '61': 'processing_error',
  '62': 'processing_error',
  '63': 'processing_error',
  '120': 'processing_error',
  '121': 'processing_error',
  '122': 'processing_error',
};

export function declineOf(responseCode: string, reasonCode: string | undefined): DeclineCode {
  return (reasonCode && REASONS[reasonCode]) || (responseCode === RESPONSE.declined ? 'card_declined' : 'processing_error');
}


/** Statuses of a transaction that holds money, card or eCheck, before or after settlement. */
export const TAKEN = new Set(['authorizedPendingCapture', 'capturedPendingSettlement', 'settledSuccessfully', 'approvedReview', 'pendingFinalSettlement', 'pendingSettlement', 'returnedItem', 'chargeback', 'chargebackReversal']);
/** Statuses held by the fraud filters: the money is authorized, the decision is pending. */
export const HELD = new Set(['FDSPendingReview', 'FDSAuthorizedPendingReview', 'underReview']);
/** Statuses that can still be voided (not yet settled). */
export const UNSETTLED = new Set(['authorizedPendingCapture', 'capturedPendingSettlement', 'FDSPendingReview', 'FDSAuthorizedPendingReview', 'underReview', 'approvedReview']);
