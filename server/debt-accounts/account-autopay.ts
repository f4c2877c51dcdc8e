/**
 * An account's autopay as the account's reads show it: the debt accounts' own read of the
 * `autopays` table (the autopay module writes it), and the one mapper of its row to the API.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';

export const AUTOPAYS = 'autopays';

export const AUTOPAY_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'payment_method_id', 'amount_type', 'amount', 'day_of_month', 'next_run_at', 'last_run_at', 'last_outcome', 'last_error', 'created_at', 'updated_at',
].map((column) => `${AUTOPAYS}.${column}`);

export interface AutopayRow {
  id: string;
  debt_account_id: string;
  customer_id: string;
  payment_method_id: string | null;
  amount_type: 'full_balance' | 'custom';
  /** bigint: pg answers strings. */
  amount: string | null;
  day_of_month: number;
  next_run_at: Date;
  last_run_at: Date | null;
  last_outcome: 'charged' | 'failed' | 'skipped' | 'processing' | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function autopaysOf(db: Knex, tenant: Tenant, accountIds: string[]): Promise<AutopayRow[]> {
  if (accountIds.length === 0) return [];
  return scoped(db, AUTOPAYS, tenant).whereIn(`${AUTOPAYS}.debt_account_id`, accountIds).select(AUTOPAY_COLUMNS);
}

export function autopayToApi(row: AutopayRow): components['schemas']['Autopay'] {
  return {
    amount_type: row.amount_type,
    amount: row.amount === null ? null : Number(row.amount),
    day_of_month: row.day_of_month,
    payment_method_id: row.payment_method_id,
    next_run_at: row.next_run_at.toISOString(),
    last_run_at: row.last_run_at ? row.last_run_at.toISOString() : null,
    last_outcome: row.last_outcome,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
  };
}
