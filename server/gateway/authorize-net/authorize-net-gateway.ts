/**
 * The Authorize.net adapter. Saved cards and bank accounts are Customer Information Manager
 * profiles (the token names the customer profile and its payment profile, never a number);
 * a charge is an `authCaptureTransaction` on the profile (card, or eCheck: an ACH debit,
 * answered pending); void before settlement, refund after.
 *
 * How it keeps the port's promise without an idempotency key. A charge carries our charge's id
 * (its first 20 hex digits: `invoiceNumberOf`) as `invoiceNumber` and `refId`, and a
 * `duplicateWindow`: the same request again within the window is refused as a duplicate
 * (reason 11) and answered with the first one's transaction, so a repeat within it takes nothing
 * twice; the service never repeats a charge whose answer was lost: recovery asks `find()`.
 * `find()` reads the unsettled list, then the settled batches, for the invoice number. Until
 * the request timeout and the duplicate window have both passed since the charge was sent, a
 * charge not found there is not yet known: `find()` throws GatewayUnanswered and recovery asks
 * again later; after that, undefined (never received). Authorize.net cannot refuse a request
 * still on its way after that answer, so the promise is kept by a sweep instead of by the
 * processor: `arrivalsSince()` lists every transaction of ours submitted since a time, by
 * invoice number, and recovery records one whose charge is still `processing` (through
 * `find()`) and takes back (`takeBack()`: void, or refund once settled) one whose charge was
 * released. Money taken late is never left taken and unrecorded, only for as long as the sweep's
 * period.
 */
import { randomBytes } from 'node:crypto';
import {
  achReturnCodeOf,
  achReturnMessage,
  DECLINE_MESSAGES,
  GatewayRefusal,
  GatewayUnanswered,
  type BankAccountDetails,
  type CardDetails,
  type ChargeOutcome,
  type LaterOutcome,
  type PaymentGateway,
} from '../gateway';
import type { ProcessorNotice } from '../processor-notices';
import { apiClient, AuthorizeNetError, cents, dollars, expectOk, type ApiAnswer, type AuthorizeNetCredentials } from './authorize-net-api';
import { declineOf, DUPLICATE_REASON, HELD, invoiceNumberOf, RESPONSE, TAKEN, UNSETTLED } from './authorize-net-codes';
import { amountOf, reports, returnedItemsOf, utc, type ListedTransaction, type TransactionDetails } from './authorize-net-reports';

export { invoiceNumberOf } from './authorize-net-codes';

export interface AuthorizeNetOptions {
  /** AUTHORIZE_NET_API_URL, or Authorize.net's own host (`AUTHORIZE_NET_URLS`). */
  apiUrl: string;
  /** How long a request may take before it is unanswered (default 30 s). */
  timeoutMs?: number;
  /** The duplicate window sent with each charge and refund (default 120 s, the processor's own; at most 28,800). */
  duplicateWindowSeconds?: number;
  /** How long after an eCheck debit its outcome is asked (default 5 days). */
  achCheckAfterSeconds?: number;
  clock?: () => Date;
  /**
   * When the charge with this id was sent at the latest (the charge's `updated_at` while it is
   * `processing`): `find()` waits the timeout and the window from then. Without it (or without
   * an answer), from the first time this process sent or asked about the charge.
   */
  sentAt?: (chargeId: string) => Promise<Date | undefined>;
  /** How each request is sent (the processor's pace takes a slot per request: gateway/paced-gateway.ts `pacedFetch`). */
  fetch?: typeof fetch;
}

/** A transaction of ours the processor holds, by invoice number (`arrivalsSince`). */
export interface Arrival {
  invoiceNumber: string;
  reference: string;
  status: string;
  amount: number;
  submittedAt: Date;
}

export interface AuthorizeNetGateway extends PaymentGateway {
  /** Every transaction with an invoice number submitted since `since` (unsettled, then settled). */
  arrivalsSince(since: Date): Promise<Arrival[]>;
  /**
   * Gives back the money of a transaction nobody records: voided before settlement, else refunded
   * in full (`key` as the refund's invoice number). Answers where its money is now; asked again,
   * the same answer and nothing more moves.
   */
  takeBack(reference: string, key: string): Promise<'voided' | 'refunded' | 'nothing_taken'>;
  /** eCheck returns and chargebacks in the batches settled since `since`, as notices (Authorize.net sends no webhook for them). */
  laterNotices(since: Date): Promise<ProcessorNotice[]>;
}

const SENT_KEPT = 10_000;
/**
 * When this process last sent each charge, and when it first asked about one it did not send, by
 * merchant account and charge: kept by the process, not by one gateway object (one is made per
 * request that needs it), at most SENT_KEPT of each (the oldest forgotten first).
 */
const sent = new Map<string, number>();
const asked = new Map<string, number>();
/** How far before the charge was sent the lists are read (the processor's clock against ours). */
const CLOCK_SLACK_MS = 10 * 60_000;
/** How soon a card held by the fraud filters, or an unsettled eCheck, is asked about again. */
const RECHECK_SECONDS = 86_400;
/** Statuses of a payment answered pending (held for review) that ended without taking the money. */
const FAILED_LATER = new Set(['declined', 'voided', 'expired', 'failedReview', 'generalError', 'communicationError']);

type Kind = 'card' | 'ach';
const tokenOf = (kind: Kind, profileId: string, paymentProfileId: string) => `anet_${kind}_${profileId}_${paymentProfileId}`;
function parseToken(token: string): { kind: Kind; customerProfileId: string; paymentProfileId: string } {
  const match = /^anet_(card|ach)_(\d+)_(\d+)$/.exec(token);
  if (!match) throw new GatewayRefusal('No such token.');
  return { kind: match[1] as Kind, customerProfileId: match[2]!, paymentProfileId: match[3]! };
}

export function authorizeNetGateway(credentials: AuthorizeNetCredentials, options: AuthorizeNetOptions): AuthorizeNetGateway {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const window = Math.min(options.duplicateWindowSeconds ?? 120, 28_800);
  const achCheckAfter = options.achCheckAfterSeconds ?? 5 * 86_400;
  const clock = options.clock ?? (() => new Date());
  const api = apiClient(credentials, options.apiUrl, timeoutMs, options.fetch);
  const report = reports(api);
  const remember = (times: Map<string, number>, key: string, at: number, replace: boolean) => {
    if (times.size >= SENT_KEPT) times.delete(times.keys().next().value!);
    if (replace || !times.has(`${credentials.apiLoginId}:${key}`)) times.set(`${credentials.apiLoginId}:${key}`, at);
  };
  const recalled = (times: Map<string, number>, key: string) => times.get(`${credentials.apiLoginId}:${key}`);
  const duplicateWindow = { setting: [{ settingName: 'duplicateWindow', settingValue: String(window) }] };

  async function createProfile(payment: Record<string, unknown>, kind: Kind): Promise<string> {
    try {
      const answer = expectOk(
        await api.post('createCustomerProfileRequest', {
          profile: {
            // A profile per saved method: Authorize.net refuses a second profile with the same id, description and email.
            merchantCustomerId: randomBytes(10).toString('hex'),
            description: kind === 'card' ? 'Saved card' : 'Saved bank account',
            paymentProfiles: [{ customerType: 'individual', payment }],
          },
          validationMode: 'none',
        }),
      );
      const [paymentProfileId] = (answer.customerPaymentProfileIdList as string[] | undefined) ?? [];
      if (!paymentProfileId) throw new GatewayUnanswered('Authorize.net created a customer profile without its payment profile.');
      return tokenOf(kind, String(answer.customerProfileId), String(paymentProfileId));
    } catch (error) {
      if (error instanceof AuthorizeNetError) throw new GatewayRefusal(error.message);
      throw error;
    }
  }

  /** A charge's answer as our outcome; a duplicate is answered as the transaction it repeats. */
  async function chargeOutcome(answer: ApiAnswer, kind: Kind, invoice: string): Promise<ChargeOutcome> {
    const response = answer.transactionResponse as
      | { responseCode?: string; transId?: string; errors?: { errorCode: string; errorText: string }[] | { error: unknown } }
      | undefined;
    if (!response?.responseCode) {
      // Refused before it became a transaction (a profile it does not know): nothing was taken.
      const first = answer.messages.message?.[0];
      throw new GatewayRefusal(`Authorize.net refused the charge: ${first?.code ?? ''} ${first?.text ?? ''}`.trim());
    }
    const reference = response.transId && response.transId !== '0' ? response.transId : undefined;
    const error = (Array.isArray(response.errors) ? response.errors : [])[0];
    if (error?.errorCode === DUPLICATE_REASON) {
      if (!reference) throw new GatewayUnanswered('Authorize.net answered a duplicate without the first transaction; recovery will find it by invoice number.');
      return listedOutcome(await report.details(reference), kind);
    }
    if (response.responseCode === RESPONSE.approved) {
      return kind === 'ach' ? { status: 'pending', reference: reference!, checkAfterSeconds: achCheckAfter } : { status: 'succeeded', reference: reference! };
    }
    if (response.responseCode === RESPONSE.heldForReview) return { status: 'pending', reference: reference!, checkAfterSeconds: RECHECK_SECONDS };
    const code = declineOf(response.responseCode, error?.errorCode);
    return { status: 'failed', reference: reference ?? `anet_none_${invoice}`, code, message: `${DECLINE_MESSAGES[code]}${error ? ` (${error.errorText})` : ''}` };
  }

  /** A transaction found later (a list or its details) as our outcome. */
  async function listedOutcome(found: ListedTransaction | TransactionDetails, kind?: Kind): Promise<ChargeOutcome> {
    const ach = kind === 'ach' || ('accountType' in found && found.accountType === 'eCheck');
    const status = found.transactionStatus;
    if (TAKEN.has(status)) return ach ? { status: 'pending', reference: found.transId, checkAfterSeconds: achCheckAfter } : { status: 'succeeded', reference: found.transId };
    if (HELD.has(status)) return { status: 'pending', reference: found.transId, checkAfterSeconds: RECHECK_SECONDS };
    const details = 'responseReasonCode' in found ? found : await report.details(found.transId);
    const code = status === 'declined' ? declineOf(String(details.responseCode ?? RESPONSE.declined), details.responseReasonCode?.toString()) : 'processing_error';
    return { status: 'failed', reference: found.transId, code, message: `${DECLINE_MESSAGES[code]} (${details.responseReasonDescription ?? status})` };
  }

  /** Our transactions in the lists since `since`: unsettled first, then the settled batches. */
  async function ours(since: Date, invoice?: string): Promise<ListedTransaction[]> {
    const match = (each: ListedTransaction) => (invoice ? each.invoiceNumber === invoice : !!each.invoiceNumber);
    const unsettled = (await report.unsettledSince(since)).filter(match);
    if (invoice && unsettled.some((each) => TAKEN.has(each.transactionStatus) || HELD.has(each.transactionStatus))) return unsettled;
    const settled = (await report.settledSince(since, new Date(clock().getTime() + CLOCK_SLACK_MS))).filter(
      (each) => match(each) && utc(each.submitTimeUTC) >= since,
    );
    return [...unsettled, ...settled];
  }

  /** When the charge was sent at the latest, as far as anyone can tell: told, or known here, or else first asked about now. */
  async function sentTime(key: string): Promise<number> {
    const told = (await options.sentAt?.(key))?.getTime();
    const known = recalled(sent, key);
    if (told !== undefined || known !== undefined) return Math.max(told ?? 0, known ?? 0);
    remember(asked, key, clock().getTime(), false);
    return recalled(asked, key)!;
  }

  async function voidTransaction(reference: string, key: string): Promise<void> {
    const answer = await api.post('createTransactionRequest', {
      refId: invoiceNumberOf(key),
      transactionRequest: { transactionType: 'voidTransaction', refTransId: reference },
    });
    const response = answer.transactionResponse as { responseCode?: string; errors?: { errorCode: string; errorText: string }[] } | undefined;
    if (response?.responseCode === RESPONSE.approved) return;
    const error = response?.errors?.[0];
    // Voided already (a repeat): done.
    if (error?.errorCode === '310') return;
    throw new GatewayRefusal(`Authorize.net refused the void: ${error?.errorText ?? answer.messages.message?.[0]?.text ?? 'no reason given'}`);
  }

  async function refundTransaction(details: TransactionDetails, amount: number, key: string): Promise<void> {
    const { profile, payment } = details;
    const source =
      profile?.customerProfileId && profile.customerPaymentProfileId
        ? { profile: { customerProfileId: profile.customerProfileId, paymentProfile: { paymentProfileId: profile.customerPaymentProfileId } } }
        : payment?.bankAccount
          ? { payment: { bankAccount: payment.bankAccount } }
          : { payment: { creditCard: { cardNumber: (payment?.creditCard?.cardNumber ?? '').slice(-4), expirationDate: 'XXXX' } } };
    const answer = await api.post('createTransactionRequest', {
      refId: invoiceNumberOf(key),
      transactionRequest: {
        transactionType: 'refundTransaction',
        amount: dollars(amount),
        ...source,
        refTransId: details.transId,
        order: { invoiceNumber: invoiceNumberOf(key) },
        transactionSettings: duplicateWindow,
      },
    });
    const response = answer.transactionResponse as { responseCode?: string; errors?: { errorCode: string; errorText: string }[] } | undefined;
    const error = response?.errors?.[0];
    // The same refund again within the window: made once already.
    if (response?.responseCode === RESPONSE.approved || error?.errorCode === DUPLICATE_REASON) return;
    throw new GatewayRefusal(`Authorize.net refused the refund: ${error?.errorText ?? answer.messages.message?.[0]?.text ?? 'no reason given'} (${error?.errorCode ?? 'no code'})`);
  }

  return {
    name: 'authorize_net',

    tokenizeCard(card: CardDetails) {
      const expirationDate = `${card.expYear}-${String(card.expMonth).padStart(2, '0')}`;
      return createProfile({ creditCard: { cardNumber: card.number, expirationDate } }, 'card');
    },

    tokenizeBankAccount(account: BankAccountDetails) {
      // The port carries no name; the processor requires one (22 characters at most).
      const bankAccount = { accountType: 'checking', routingNumber: account.routingNumber, accountNumber: account.accountNumber, nameOnAccount: 'Account holder', echeckType: 'WEB' };
      return createProfile({ bankAccount }, 'ach');
    },

    async charge(token, amount, idempotencyKey) {
      const { kind, customerProfileId, paymentProfileId } = parseToken(token);
      const invoice = invoiceNumberOf(idempotencyKey);
      remember(sent, idempotencyKey, clock().getTime(), true);
      const answer = await api.post('createTransactionRequest', {
        refId: invoice,
        transactionRequest: {
          transactionType: 'authCaptureTransaction',
          amount: dollars(amount),
          profile: { customerProfileId, paymentProfile: { paymentProfileId } },
          order: { invoiceNumber: invoice, description: `Charge ${idempotencyKey}` },
          transactionSettings: duplicateWindow,
        },
      });
      return chargeOutcome(answer, kind, invoice);
    },

    async find(idempotencyKey) {
      const invoice = invoiceNumberOf(idempotencyKey);
      const sentAt = await sentTime(idempotencyKey);
      const found = await ours(new Date(sentAt - CLOCK_SLACK_MS - window * 1000), invoice);
      // The one that took money, if any did (a duplicate's refusal is no transaction of its own).
      const chosen = found.find((each) => TAKEN.has(each.transactionStatus)) ?? found.find((each) => HELD.has(each.transactionStatus)) ?? found[0];
      if (chosen) return listedOutcome(chosen);
      const knownAt = sentAt + timeoutMs + window * 1000;
      if (clock().getTime() < knownAt) {
        throw new GatewayUnanswered(`Not yet known: Authorize.net lists no transaction for invoice ${invoice}; asked again after ${new Date(knownAt).toISOString()}.`);
      }
      return undefined;
    },

    async void(reference, idempotencyKey) {
      await voidTransaction(reference, idempotencyKey);
    },

    async refund(reference, amount, idempotencyKey) {
      const details = await report.details(reference);
      if (details.transactionStatus === 'settledSuccessfully') return refundTransaction(details, amount, idempotencyKey);
      if (UNSETTLED.has(details.transactionStatus)) {
        // Not settled yet: Authorize.net refunds only settled money; all of it is given back by a void.
        if (amount !== amountOf(details)) throw new GatewayRefusal('Authorize.net refunds part of a payment only once it has settled (by the end of its day); void all of it now, or refund part of it then.');
        return voidTransaction(reference, idempotencyKey);
      }
      throw new GatewayRefusal(`A payment that is ${details.transactionStatus} at Authorize.net cannot be refunded.`);
    },

    async outcome(reference): Promise<LaterOutcome> {
      const details = await report.details(reference);
      const [returned] = returnedItemsOf(details);
      if (returned || details.transactionStatus === 'returnedItem') {
        // Any NACHA code, kept as the processor said it.
        const code = achReturnCodeOf(returned?.code);
        return { status: 'returned', code, message: achReturnMessage(code, returned?.description) };
      }
      if (details.transactionStatus === 'settledSuccessfully') return { status: 'settled' };
      if (UNSETTLED.has(details.transactionStatus)) return { status: 'pending', checkAfterSeconds: RECHECK_SECONDS };
      // Held by the fraud filters, then declined by the review (or voided, expired, failed): it never took the money.
      if (FAILED_LATER.has(details.transactionStatus)) {
        const status = details.transactionStatus;
        const response = String(details.responseCode ?? RESPONSE.declined);
        // Declined by the review itself (the held answer's code, 4, stays on it): a plain decline.
        const code =
          status === 'declined' && response !== RESPONSE.heldForReview
            ? declineOf(response, details.responseReasonCode?.toString())
            : status === 'generalError' || status === 'communicationError'
              ? 'processing_error'
              : 'card_declined';
        return { status: 'failed', code, message: `${DECLINE_MESSAGES[code]} (${details.responseReasonDescription ?? details.transactionStatus})` };
      }
      throw new GatewayRefusal(`A payment that is ${details.transactionStatus} at Authorize.net has no later outcome.`);
    },

    async arrivalsSince(since) {
      return (await ours(since)).map((each) => ({
        invoiceNumber: each.invoiceNumber!,
        reference: each.transId,
        status: each.transactionStatus,
        amount: cents(each.settleAmount ?? 0),
        submittedAt: utc(each.submitTimeUTC),
      }));
    },

    async takeBack(reference, key) {
      const details = await report.details(reference);
      if (details.transactionStatus === 'voided') return 'voided';
      if (UNSETTLED.has(details.transactionStatus)) {
        await voidTransaction(reference, key);
        return 'voided';
      }
      if (details.transactionStatus === 'settledSuccessfully') {
        try {
          await refundTransaction(details, amountOf(details), key);
        } catch (error) {
          // Refunded in full already (reason 55: the credits would exceed the debit): nothing is left taken.
          if (!(error instanceof GatewayRefusal && /\(55\)/.test(error.message))) throw error;
        }
        return 'refunded';
      }
      return 'nothing_taken';
    },

    async laterNotices(since) {
      const notices: ProcessorNotice[] = [];
      const settled = await report.settledSince(since, new Date(clock().getTime() + CLOCK_SLACK_MS));
      for (const each of settled) {
        const base = { reference: each.transId };
        const amount = cents(each.settleAmount ?? 0);
        if (each.transactionStatus === 'returnedItem' || each.hasReturnedItems) {
          const [returned] = returnedItemsOf(await report.details(each.transId));
          const code = achReturnCodeOf(returned?.code);
          notices.push({ ...base, noticeId: `anet_returned_${each.transId}`, kind: 'ach.returned', code, message: achReturnMessage(code, returned?.description) });
        }
        if (each.transactionStatus === 'chargeback' || each.transactionStatus === 'chargebackReversal') {
          const disputeId = `anet_chargeback_${each.transId}`;
          notices.push({ ...base, noticeId: `${disputeId}_opened`, kind: 'chargeback.opened', disputeId, amount, reason: 'The cardholder disputed the payment (reported by Authorize.net).' });
          if (each.transactionStatus === 'chargebackReversal') notices.push({ ...base, noticeId: `${disputeId}_won`, kind: 'chargeback.won', disputeId, amount });
        }
      }
      return notices;
    },
  };
}

/** One harmless call (authenticateTestRequest): resolves when the credentials are accepted, else throws what the processor said. */
export async function checkAuthorizeNetCredentials(credentials: AuthorizeNetCredentials, options: Pick<AuthorizeNetOptions, 'apiUrl' | 'timeoutMs'>): Promise<void> {
  const answer = await apiClient(credentials, options.apiUrl, options.timeoutMs ?? 30_000).post('authenticateTestRequest', {});
  expectOk(answer);
}
