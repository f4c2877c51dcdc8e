/**
 * Authorize.net's Transaction Reporting: the unsettled transactions, the settled batches and
 * their transactions, and one transaction's details. What `find()` and the sweeps read: no
 * request here moves money.
 */
import { cents, expectOk, type ApiClient } from './authorize-net-api';

/** A transaction as the lists show it. */
export interface ListedTransaction {
  transId: string;
  submitTimeUTC: string;
  transactionStatus: string;
  invoiceNumber?: string;
  accountType?: string;
  settleAmount?: number | string;
  hasReturnedItems?: boolean;
}

/** A transaction as getTransactionDetails shows it (the fields we read). */
export interface TransactionDetails {
  transId: string;
  transactionStatus: string;
  responseCode?: number | string;
  responseReasonCode?: number | string;
  responseReasonDescription?: string;
  authAmount?: number | string;
  settleAmount?: number | string;
  order?: { invoiceNumber?: string };
  profile?: { customerProfileId?: string; customerPaymentProfileId?: string };
  payment?: { creditCard?: { cardNumber?: string }; bankAccount?: Record<string, string> };
  returnedItems?: unknown;
}

export interface ReturnedItem {
  id?: string;
  dateUTC?: string;
  code: string;
  description?: string;
}

/** The lists' largest page. */
const PAGE = 1000;
/** The settled batch list answers at most 31 days at once. */
const BATCH_SPAN_MS = 31 * 86_400_000;

/** A JSON array as the API writes it: an array, one object, or `{ element: … }` around either. */
export function listOf<T>(value: unknown, element?: string): T[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value as T[];
  if (element && typeof value === 'object' && element in (value as object)) return listOf<T>((value as Record<string, unknown>)[element]);
  return [value as T];
}

/** The processor's UTC times carry no zone ("2026-12-05T12:00:00" or with fractions). */
export function utc(time: string): Date {
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(time) ? time : `${time}Z`);
}

/** Seconds precision in UTC, as the batch list's reference writes its dates ("2026-12-05T16:00:00Z"). */
const apiTime = (at: Date) => `${at.toISOString().slice(0, 19)}Z`;

export function reports(api: ApiClient) {
  /** The unsettled transactions submitted at or after `since`, newest first. */
  async function unsettledSince(since: Date): Promise<ListedTransaction[]> {
    const found: ListedTransaction[] = [];
    for (let offset = 1; ; offset += 1) {
      const answer = expectOk(
        await api.post('getUnsettledTransactionListRequest', {
          sorting: { orderBy: 'submitTimeUTC', orderDescending: true },
          paging: { limit: PAGE, offset },
        }),
      );
      const page = listOf<ListedTransaction>(answer.transactions, 'transaction');
      for (const each of page) {
        if (utc(each.submitTimeUTC) < since) return found;
        found.push(each);
      }
      if (page.length < PAGE) return found;
    }
  }

  /** The transactions of the batches settled from `since` to `until`. */
  async function settledSince(since: Date, until: Date): Promise<ListedTransaction[]> {
    const found: ListedTransaction[] = [];
    for (let from = since.getTime(); from < until.getTime(); from += BATCH_SPAN_MS) {
      const to = Math.min(from + BATCH_SPAN_MS, until.getTime());
      const batches = expectOk(
        await api.post('getSettledBatchListRequest', { includeStatistics: false, firstSettlementDate: apiTime(new Date(from)), lastSettlementDate: apiTime(new Date(to)) }),
      );
      for (const batch of listOf<{ batchId: string }>(batches.batchList, 'batch')) {
        for (let offset = 1; ; offset += 1) {
          const answer = expectOk(
            await api.post('getTransactionListRequest', { batchId: batch.batchId, sorting: { orderBy: 'submitTimeUTC', orderDescending: true }, paging: { limit: PAGE, offset } }),
          );
          const page = listOf<ListedTransaction>(answer.transactions, 'transaction');
          found.push(...page);
          if (page.length < PAGE) break;
        }
      }
    }
    return found;
  }

  async function details(transId: string): Promise<TransactionDetails> {
    const answer = expectOk(await api.post('getTransactionDetailsRequest', { transId }));
    return answer.transaction as TransactionDetails;
  }

  return { unsettledSince, settledSince, details };
}

export type Reports = ReturnType<typeof reports>;

export function returnedItemsOf(details: TransactionDetails): ReturnedItem[] {
  return listOf<ReturnedItem>(details.returnedItems, 'returnedItem');
}

export const amountOf = (transaction: { settleAmount?: number | string; authAmount?: number | string }) => cents(transaction.settleAmount ?? transaction.authAmount ?? 0);
