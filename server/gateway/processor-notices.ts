/**
 * What a processor tells us later, in its own signed webhook, translated into one shape so that
 * every processor's notice is applied by the same code (once: `noticeId` is the processor's own
 * event id, kept so that a repeat changes nothing). Each adapter parses and checks its
 * processor's signature and answers these; `reference` is the processor's id of the payment
 * (what `ChargeOutcome.reference` held), `chargeId` ours when the processor echoes it.
 */
import type { AchReturnCode, DeclineCode } from './gateway';

interface NoticeBase {
  /** The processor's own id of this notice (Stripe's event id, Authorize.net's notificationId). */
  noticeId: string;
  /** The processor's id of the payment. */
  reference: string;
  /** Our charge's id, when the processor carried it (Stripe metadata, Authorize.net invoiceNumber). */
  chargeId?: string;
}

export type ProcessorNotice =
  /** A payment we may still hold as `processing` (or an ACH debit as pending) succeeded or settled. */
  | (NoticeBase & { kind: 'payment.succeeded' })
  | (NoticeBase & { kind: 'payment.failed'; code: DeclineCode; message: string })
  /** An ACH debit came back after it was counted. */
  | (NoticeBase & { kind: 'ach.returned'; code: AchReturnCode; message: string })
  /** A cardholder disputed the payment (a chargeback): the money is taken back now. */
  | (NoticeBase & { kind: 'chargeback.opened'; disputeId: string; amount: number; reason: string })
  | (NoticeBase & { kind: 'chargeback.won'; disputeId: string; amount: number })
  | (NoticeBase & { kind: 'chargeback.lost'; disputeId: string; amount: number })
  /** A notice we read and have nothing to do with (answered 200, recorded as seen). */
  | (NoticeBase & { kind: 'ignored'; type: string });

/** A webhook whose signature is missing, malformed, stale or wrong: answered 400, nothing changes. */
export class NoticeSignatureInvalid extends Error {}
