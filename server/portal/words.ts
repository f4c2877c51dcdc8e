/**
 * The words a debtor reads for the API's codes: one table for every Portal page (templates
 * reach it as `it.words`), so "settlement_write_off (succeeded)" is never shown. A code this
 * table does not know is shown with its underscores as spaces, never as a blank.
 */
import type { components } from '../../generated/schema';

type S = components['schemas'];

const TRANSACTION_TYPES: Record<S['Transaction']['type'], string> = {
  charge: 'Payment',
  void: 'Payment cancelled',
  refund: 'Refund',
  ach_settlement: 'Bank payment cleared',
  ach_return: 'Bank payment returned',
  external: 'Payment received',
  external_reversal: 'Payment reversed',
  settlement_write_off: 'Settlement discount',
  settlement_write_off_reversal: 'Settlement discount withdrawn',
  chargeback: 'Payment disputed with your card issuer',
  chargeback_reversal: 'Card dispute closed: payment restored',
};

const TRANSACTION_STATUSES: Record<S['Transaction']['status'], string> = {
  pending: 'In progress',
  succeeded: 'Paid',
  failed: 'Declined',
  settled: 'Cleared',
  returned: 'Returned',
};

const CHARGE_STATUSES: Record<S['ChargeStatus'], string> = {
  processing: 'In progress',
  pending: 'In progress',
  succeeded: 'Paid',
  failed: 'Declined',
  returned: 'Returned by the bank',
  voided: 'Cancelled',
  refunded: 'Refunded',
  partially_refunded: 'Partly refunded',
  scheduled: 'Scheduled',
  canceled: 'Cancelled',
};

const PLAN_STATUSES: Record<S['PaymentPlanStatus'], string> = {
  pending_configuration: 'Being set up',
  pending_enrollment: 'Waiting for a payment method',
  active: 'Active',
  completed: 'Completed',
  canceled: 'Cancelled',
  defaulted: 'Stopped after missed payments',
};

const INSTALMENT_STATUSES: Record<S['PaymentPlanInstalment']['status'], string> = {
  pending: 'Due',
  succeeded: 'Paid',
  failed: 'Missed',
  canceled: 'Cancelled',
  skipped: 'Skipped',
};

const ACCOUNT_STATUSES: Record<S['DebtAccountStatus'], string> = {
  active: 'Open',
  archived: 'Closed',
  closed: 'Closed',
  paid_off: 'Paid off',
};

const FREQUENCIES: Record<S['PaymentPlanFrequency'], string> = {
  weekly: 'every week',
  every_other_week: 'every other week',
  monthly: 'every month',
  last_of_month: 'on the last day of each month',
};

const TABLES = {
  transactionType: TRANSACTION_TYPES,
  transactionStatus: TRANSACTION_STATUSES,
  chargeStatus: CHARGE_STATUSES,
  planStatus: PLAN_STATUSES,
  instalmentStatus: INSTALMENT_STATUSES,
  accountStatus: ACCOUNT_STATUSES,
  frequency: FREQUENCIES,
} as const;

export type WordTable = keyof typeof TABLES;

/** The debtor's word for `code` in `table`. */
export function word(table: WordTable, code: string | null | undefined): string {
  const known = (TABLES[table] as Record<string, string>)[code ?? ''];
  return known ?? String(code ?? '').replace(/_/g, ' ');
}

/** What a transaction was, as one phrase: "Settlement discount", "Payment · Declined". */
export function transactionWords(transaction: Pick<S['Transaction'], 'type' | 'status'>): string {
  const type = word('transactionType', transaction.type);
  // A write-off, a void or a refund is what it says; only a payment's outcome needs telling.
  return transaction.type === 'charge' || transaction.type === 'ach_settlement' || transaction.status === 'failed' || transaction.status === 'returned'
    ? `${type} · ${word('transactionStatus', transaction.status)}`
    : type;
}

export const words = { word, transaction: transactionWords };
