/**
 * A local server that speaks Authorize.net's documented JSON API (one URL, the request's root
 * element names the method; answers start with a byte-order mark, as the processor's do): CIM
 * profiles, createTransactionRequest (authCapture on a profile, void, refund, the duplicate
 * window), the reports (unsettled list, settled batches, a batch's list, details) and
 * authenticateTestRequest. Its clock is the test's (`now`), and it behaves as told: throttle
 * (429), down (503), hang (no answer at all), answer E00001, lose the answers of the next charges after carrying them out, refuse the
 * credentials. It keeps every request it received, so tests assert what was sent.
 *
 * Test cards (as the sandbox simulator's): 4000000000000002 declined (reason 2),
 * 4000000000009995 declined (reason 2: Authorize.net has no insufficient-funds code),
 * 4000000000000069 expired (3/8), 4000000000000127 card code (2/44), 4000000000000119 processor
 * error (3/19), 4000000000000259 held for review by the fraud filters (4/252); any other number is
 * approved.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CARD_ANSWERS: Record<string, { responseCode: string; reason: string; text: string }> = {
  '4000000000000002': { responseCode: '2', reason: '2', text: 'This transaction has been declined.' },
  '4000000000009995': { responseCode: '2', reason: '2', text: 'This transaction has been declined.' },
  '4000000000000069': { responseCode: '3', reason: '8', text: 'The credit card has expired.' },
  '4000000000000127': { responseCode: '2', reason: '44', text: 'This transaction has been declined.' },
  '4000000000000119': { responseCode: '3', reason: '19', text: 'An error occurred during processing. Please try again in 5 minutes.' },
  '4000000000000259': { responseCode: '4', reason: '252', text: 'Your order has been received. Thank you for your business!' },
};

interface PaymentProfile {
  kind: 'card' | 'ach';
  number: string;
}

export interface FakeTransaction {
  transId: string;
  type: string;
  invoiceNumber?: string;
  amount: number;
  refunded: number;
  status: string;
  responseCode: string;
  reason: string;
  reasonText: string;
  submitted: Date;
  kind: 'card' | 'ach';
  last4: string;
  profile?: { customerProfileId: string; customerPaymentProfileId: string };
  duplicateKey?: string;
  batchId?: string;
  returnedItems?: { id: string; dateUTC: string; code: string; description: string }[];
}

export interface Behaviour {
  /** The next this many requests answer 429 with Retry-After: 1. */
  throttle: number;
  /** Every request answers 503 while set. */
  down: boolean;
  /** Every request is taken and never answered while set (the client's timeout ends it). */
  hang: boolean;
  /** Every request answers the processor's own "try again" error (E00001) while set. */
  systemError: boolean;
  /** The next this many charges are carried out, then their connection is cut before the answer. */
  loseAnswers: number;
}

export interface AuthorizeNetServer {
  url: string;
  /** Every request received, in order: its method (root element) and body (inside it). */
  requests: { method: string; body: Record<string, any> }[];
  transactions: FakeTransaction[];
  behaviour: Behaviour;
  /** The processor's clock. */
  now: Date;
  /** Settles every unsettled transaction into a new batch at `now`. */
  settle(): string;
  returnItem(transId: string, code: string, description: string): void;
  chargeback(transId: string, reversed?: boolean): void;
  /** The fraud review of a held transaction ends. */
  review(transId: string, approved: boolean): void;
  /** Accepts these credentials too (another merchant account on the same server). */
  acceptAlso(other: { apiLoginId: string; transactionKey: string }): void;
  /** The requests of `method` received so far. */
  sent(method: string): Record<string, any>[];
  close(): Promise<void>;
}

const utcText = (at: Date) => at.toISOString().slice(0, 23);
const ok = (extra: Record<string, unknown> = {}) => ({ ...extra, messages: { resultCode: 'Ok', message: [{ code: 'I00001', text: 'Successful.' }] } });
const error = (code: string, text: string, extra: Record<string, unknown> = {}) => ({ ...extra, messages: { resultCode: 'Error', message: [{ code, text }] } });
/** A date as the API takes it: UTC, with or without the Z. */
const utc = (text: string) => new Date(/[zZ]$/.test(text) ? text : `${text}Z`);
const cents = (amount: string | number) => Math.round(Number(amount) * 100);
const money = (amount: number) => amount / 100;

export async function startAuthorizeNetServer(credentials: { apiLoginId: string; transactionKey: string }): Promise<AuthorizeNetServer> {
  const profiles = new Map<string, Map<string, PaymentProfile>>();
  const transactions: FakeTransaction[] = [];
  const batches: { batchId: string; settled: Date; kind: 'card' | 'ach' }[] = [];
  let nextId = 60_000_000_001;
  const id = () => String(nextId++);
  const behaviour: Behaviour = { throttle: 0, down: false, hang: false, systemError: false, loseAnswers: 0 };
  const requests: AuthorizeNetServer['requests'] = [];
  const state = { now: new Date() };
  const accepted = [credentials];
  const byId = (transId: string) => transactions.find((each) => each.transId === transId);

  function summary(each: FakeTransaction) {
    return {
      transId: each.transId,
      submitTimeUTC: utcText(each.submitted),
      submitTimeLocal: utcText(each.submitted),
      transactionStatus: each.status,
      ...(each.invoiceNumber ? { invoiceNumber: each.invoiceNumber } : {}),
      accountType: each.kind === 'ach' ? 'eCheck' : 'Visa',
      accountNumber: `XXXX${each.last4}`,
      settleAmount: money(each.amount),
      marketType: 'eCommerce',
      product: 'Card Not Present',
      ...(each.returnedItems ? { hasReturnedItems: true } : {}),
    };
  }

  function page(list: FakeTransaction[], body: Record<string, any>) {
    const sorted = [...list].sort((a, b) => b.submitted.getTime() - a.submitted.getTime());
    const limit = Number(body.paging?.limit ?? 1000);
    const offset = Number(body.paging?.offset ?? 1);
    const slice = sorted.slice((offset - 1) * limit, offset * limit);
    return ok({ transactions: slice.map(summary), totalNumInResultSet: sorted.length });
  }

  function transactionAnswer(tx: FakeTransaction | undefined, responseCode: string, reason: string, text: string, refId?: string) {
    const approved = responseCode === '1';
    const transactionResponse = {
      responseCode,
      authCode: approved ? 'A1B2C3' : '',
      avsResultCode: 'Y',
      cvvResultCode: approved ? 'M' : '',
      transId: tx?.transId ?? '0',
      refTransID: '',
      transHash: '',
      testRequest: '0',
      accountNumber: tx ? `XXXX${tx.last4}` : '',
      accountType: tx?.kind === 'ach' ? 'eCheck' : 'Visa',
      ...(approved || responseCode === '4' ? { messages: [{ code: reason, description: text }] } : { errors: [{ errorCode: reason, errorText: text }] }),
    };
    const base = { transactionResponse, ...(refId ? { refId } : {}) };
    return approved || responseCode === '4' ? ok(base) : error('E00027', 'The transaction was unsuccessful.', base);
  }

  function createTransaction(body: Record<string, any>) {
    const request = body.transactionRequest ?? {};
    const settings: { settingName: string; settingValue: string }[] = [request.transactionSettings?.setting ?? []].flat();
    const window = Number(settings.find((each) => each.settingName === 'duplicateWindow')?.settingValue ?? 120);
    if (request.transactionType === 'authCaptureTransaction') {
      const owner = profiles.get(request.profile?.customerProfileId);
      const method = owner?.get(request.profile?.paymentProfile?.paymentProfileId);
      if (!method) return error('E00040', 'The record cannot be found.', { refId: body.refId });
      const amount = cents(request.amount);
      const duplicateKey = `auth:${request.profile.customerProfileId}:${request.profile.paymentProfile.paymentProfileId}:${amount}:${request.order?.invoiceNumber ?? ''}`;
      const earlier = transactions.find((each) => each.duplicateKey === duplicateKey && state.now.getTime() - each.submitted.getTime() < window * 1000);
      if (earlier) return transactionAnswer(earlier, '3', '11', 'A duplicate transaction has been submitted.', body.refId);
      const answer = method.kind === 'card' ? CARD_ANSWERS[method.number] : undefined;
      const responseCode = answer?.responseCode ?? '1';
      const tx: FakeTransaction = {
        transId: id(),
        type: 'authCaptureTransaction',
        invoiceNumber: request.order?.invoiceNumber,
        amount,
        refunded: 0,
        status: { '1': 'capturedPendingSettlement', '2': 'declined', '4': 'FDSPendingReview' }[responseCode] ?? 'generalError',
        responseCode,
        reason: answer?.reason ?? '1',
        reasonText: answer?.text ?? 'This transaction has been approved.',
        submitted: state.now,
        kind: method.kind,
        last4: method.number.slice(-4),
        profile: { customerProfileId: request.profile.customerProfileId, customerPaymentProfileId: request.profile.paymentProfile.paymentProfileId },
        duplicateKey,
      };
      transactions.push(tx);
      return transactionAnswer(tx, responseCode, tx.reason, tx.reasonText, body.refId);
    }
    const original = byId(request.refTransId);
    if (!original) return transactionAnswer(undefined, '3', '16', 'The transaction cannot be found.', body.refId);
    if (request.transactionType === 'voidTransaction') {
      if (original.status === 'voided') return transactionAnswer(original, '3', '310', 'This transaction has already been voided.', body.refId);
      if (original.status !== 'capturedPendingSettlement') return transactionAnswer(original, '3', '16', 'The transaction cannot be found.', body.refId);
      original.status = 'voided';
      return transactionAnswer(original, '1', '1', 'This transaction has been approved.', body.refId);
    }
    if (request.transactionType === 'refundTransaction') {
      const amount = cents(request.amount);
      const duplicateKey = `refund:${original.transId}:${amount}:${request.order?.invoiceNumber ?? ''}`;
      const earlier = transactions.find((each) => each.duplicateKey === duplicateKey && state.now.getTime() - each.submitted.getTime() < window * 1000);
      if (earlier) return transactionAnswer(earlier, '3', '11', 'A duplicate transaction has been submitted.', body.refId);
      if (original.status !== 'settledSuccessfully') return transactionAnswer(undefined, '3', '54', 'The referenced transaction does not meet the criteria for issuing a credit.', body.refId);
      if (original.refunded + amount > original.amount) return transactionAnswer(undefined, '3', '55', 'The sum of credits against the referenced transaction would exceed the original debit amount.', body.refId);
      original.refunded += amount;
      const refund: FakeTransaction = { ...original, transId: id(), type: 'refundTransaction', invoiceNumber: request.order?.invoiceNumber, amount, refunded: 0, status: 'refundPendingSettlement', submitted: state.now, duplicateKey, batchId: undefined, returnedItems: undefined };
      transactions.push(refund);
      return transactionAnswer(refund, '1', '1', 'This transaction has been approved.', body.refId);
    }
    return error('E00003', `The transaction type ${request.transactionType} is not supported here.`);
  }

  function details(transId: string) {
    const tx = byId(transId);
    if (!tx) return error('E00040', 'The record cannot be found.');
    return ok({
      transaction: {
        transId: tx.transId,
        submitTimeUTC: utcText(tx.submitted),
        transactionType: tx.type,
        transactionStatus: tx.status,
        responseCode: Number(tx.responseCode),
        responseReasonCode: Number(tx.reason),
        responseReasonDescription: tx.reasonText,
        ...(tx.batchId ? { batch: { batchId: tx.batchId } } : {}),
        order: { invoiceNumber: tx.invoiceNumber },
        authAmount: money(tx.amount),
        settleAmount: money(tx.amount),
        payment:
          tx.kind === 'ach'
            ? { bankAccount: { routingNumber: 'XXXX0000', accountNumber: `XXXX${tx.last4}`, nameOnAccount: 'Account holder', echeckType: 'WEB' } }
            : { creditCard: { cardNumber: `XXXX${tx.last4}`, expirationDate: 'XXXX', cardType: 'Visa' } },
        ...(tx.profile ? { profile: tx.profile } : {}),
        ...(tx.returnedItems ? { returnedItems: tx.returnedItems } : {}),
      },
    });
  }

  function handle(method: string, body: Record<string, any>): object {
    const auth = body.merchantAuthentication ?? {};
    if (!accepted.some((each) => auth.name === each.apiLoginId && auth.transactionKey === each.transactionKey)) {
      return error('E00007', 'User authentication failed due to invalid authentication values.');
    }
    switch (method) {
      case 'authenticateTestRequest':
        return ok();
      case 'createCustomerProfileRequest': {
        const payment = [body.profile?.paymentProfiles ?? []].flat()[0]?.payment ?? {};
        const profileId = id();
        const paymentProfileId = id();
        const kind = payment.bankAccount ? 'ach' : 'card';
        const number = kind === 'ach' ? payment.bankAccount.accountNumber : payment.creditCard?.cardNumber;
        if (!/^\d{4,19}$/.test(number ?? '')) return error('E00013', 'Card Number is invalid.');
        profiles.set(profileId, new Map([[paymentProfileId, { kind, number }]]));
        return ok({ customerProfileId: profileId, customerPaymentProfileIdList: [paymentProfileId], customerShippingAddressIdList: [], validationDirectResponseList: [] });
      }
      case 'createTransactionRequest':
        return createTransaction(body);
      case 'getUnsettledTransactionListRequest':
        return page(
          transactions.filter((each) => !each.batchId),
          body,
        );
      case 'getSettledBatchListRequest': {
        const from = utc(body.firstSettlementDate).getTime();
        const to = utc(body.lastSettlementDate).getTime();
        // The reference limits the range to 31 days (the error code for it is this server's own choice).
        if (Number.isNaN(from) || Number.isNaN(to) || to - from > 31 * 86_400_000) return error('E00003', 'The date range must not exceed 31 days and both dates must be valid.');
        const found = batches.filter((each) => each.settled.getTime() >= from && each.settled.getTime() <= to);
        if (found.length === 0) return { messages: { resultCode: 'Ok', message: [{ code: 'I00004', text: 'No records found.' }] } };
        return ok({
          batchList: found.map((each) => ({ batchId: each.batchId, settlementTimeUTC: utcText(each.settled), settlementState: 'settledSuccessfully', paymentMethod: each.kind === 'ach' ? 'eCheck' : 'creditCard' })),
        });
      }
      case 'getTransactionListRequest':
        return page(
          transactions.filter((each) => each.batchId === body.batchId),
          body,
        );
      case 'getTransactionDetailsRequest':
        return details(body.transId);
      default:
        return error('E00004', 'The name of the requested API method is invalid.');
    }
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, Record<string, any>>;
      const method = Object.keys(parsed)[0]!;
      requests.push({ method, body: parsed[method]! });
      if (behaviour.down) {
        res.writeHead(503, { 'content-type': 'text/html' }).end('<html>Service Unavailable</html>');
        return;
      }
      if (behaviour.hang) return;
      if (behaviour.systemError) {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(`\uFEFF${JSON.stringify(error('E00001', 'An error occurred during processing. Please try again.'))}`);
        return;
      }
      if (behaviour.throttle > 0) {
        behaviour.throttle -= 1;
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('Too Many Requests');
        return;
      }
      const answer = handle(method, parsed[method]!);
      if (method === 'createTransactionRequest' && parsed[method]!.transactionRequest?.transactionType === 'authCaptureTransaction' && behaviour.loseAnswers > 0) {
        behaviour.loseAnswers -= 1;
        // Carried out; the answer never arrives.
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(`\uFEFF${JSON.stringify(answer)}`);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/xml/v1/request.api`,
    requests,
    transactions,
    behaviour,
    get now() {
      return state.now;
    },
    set now(at: Date) {
      state.now = at;
    },
    settle() {
      const open = transactions.filter((each) => !each.batchId && each.status !== 'FDSPendingReview');
      const batchId = id();
      batches.push({ batchId, settled: state.now, kind: open.some((each) => each.kind === 'ach') ? 'ach' : 'card' });
      for (const each of open) {
        each.batchId = batchId;
        if (each.status === 'capturedPendingSettlement') each.status = 'settledSuccessfully';
        if (each.status === 'refundPendingSettlement') each.status = 'refundSettledSuccessfully';
      }
      return batchId;
    },
    returnItem(transId, code, description) {
      const tx = byId(transId)!;
      tx.status = 'returnedItem';
      tx.returnedItems = [{ id: id(), dateUTC: utcText(state.now), code, description }];
    },
    chargeback(transId, reversed = false) {
      byId(transId)!.status = reversed ? 'chargebackReversal' : 'chargeback';
    },
    review(transId, approved) {
      byId(transId)!.status = approved ? 'capturedPendingSettlement' : 'declined';
    },
    acceptAlso: (other) => accepted.push(other),
    sent: (method) => requests.filter((each) => each.method === method).map((each) => each.body),
    close: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}

/** A webhook as Authorize.net posts it: the JSON body and its X-ANET-Signature. */
export function signedAuthorizeNetWebhook(notice: Record<string, unknown>, signatureKey: string): { rawBody: Buffer; headers: Record<string, string> } {
  const rawBody = Buffer.from(JSON.stringify(notice));
  const signature = createHmac('sha512', signatureKey).update(rawBody).digest('hex').toUpperCase();
  return { rawBody, headers: { 'content-type': 'application/json', 'x-anet-signature': `sha512=${signature}` } };
}
