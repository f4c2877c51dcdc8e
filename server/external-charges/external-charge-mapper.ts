/** The one place an external charge's row (and its transactions) becomes the API's object; webhooks show the same. */
import type { components } from '../../generated/schema';
import { transactionToApi } from '../charge-store/charge-mapper';
import type { TransactionRow } from '../charge-store/charge-repo';
import type { ExternalChargeRow } from './external-charge-repo';

type S = components['schemas'];

export function externalChargeToApi(row: ExternalChargeRow, transactions: TransactionRow[]): S['ExternalCharge'] {
  return {
    id: row.id,
    debt_account_id: row.debt_account_id,
    customer_id: row.customer_id,
    amount: Number(row.amount),
    paid_at: row.paid_at,
    method: row.method,
    reference: row.reference,
    note: row.note,
    status: row.status,
    reversed_at: row.reversed_at ? row.reversed_at.toISOString() : null,
    reversal_reason: row.reversal_reason,
    transactions: transactions.map(transactionToApi),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
