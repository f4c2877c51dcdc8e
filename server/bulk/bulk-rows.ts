/**
 * The business rules of bulk rows, for one chunk at a time: which rows fail and why, checked
 * against each other and against stored data with one query per kind of identifier.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { concurrently } from '../db/concurrently';
import { scoped } from '../db/tenant';
import { CUSTOMERS } from '../customer-store/customer-repo';
import { DEBT_ACCOUNTS } from '../debt-accounts/debt-account-repo';

export type BulkItem = components['schemas']['BulkItem'];
type RecordError = components['schemas']['BulkRecordError'];

export interface RowErrors {
  customer: RecordError[];
  location: RecordError[];
  debt_accounts: RecordError[];
  parent_debt_accounts: RecordError[];
}

export interface PendingRow {
  position: number;
  payload: BulkItem;
}

const TAKEN = 'has already been taken';
const NO_PARENT = 'does not match a parent debt account of this row';

/** External ids of a row's accounts: explicit parents first, then debt_accounts. */
export function accountIds(item: BulkItem): string[] {
  return [...(item.parent_debt_accounts ?? []).map((a) => a.external_id), ...(item.debt_accounts ?? []).flatMap((a) => (a.external_id ? [a.external_id] : []))];
}

/** The external ids a row's children may name: explicit parents, and implicit ones (an external_id with no parent). */
export function parentIds(item: BulkItem): Set<string> {
  return new Set([
    ...(item.parent_debt_accounts ?? []).map((a) => a.external_id),
    ...(item.debt_accounts ?? []).flatMap((a) => (a.external_id && !a.parent_external_id ? [a.external_id] : [])),
  ]);
}

async function existing(query: Knex.QueryBuilder, column: string, values: string[]): Promise<Set<string>> {
  if (values.length === 0) return new Set();
  // One array parameter, not one parameter per value (a chunk may name thousands of accounts).
  const rows: Record<string, string>[] = await query.whereRaw('?? = ANY(?)', [column, values]).select(column);
  return new Set(rows.map((row) => row[column]!));
}

/**
 * The errors of each row that breaks a rule, keyed by position. A row that passes reserves its
 * identifiers, so a later row of the chunk that repeats them fails; a failed row reserves
 * nothing, since it creates nothing.
 */
export async function checkRows(db: Knex, tenant: Tenant, rows: PendingRow[]): Promise<Map<number, RowErrors>> {
  const customerIds = rows.flatMap((row) => (row.payload.customer.external_id ? [row.payload.customer.external_id] : []));
  const [takenCustomers, takenAccounts] = await concurrently(
    db,
    () => existing(scoped(db, CUSTOMERS, tenant), 'external_id', customerIds),
    () => existing(scoped(db, DEBT_ACCOUNTS, tenant), 'external_id', rows.flatMap((row) => accountIds(row.payload))),
  );
  const failures = new Map<number, RowErrors>();
  for (const { position, payload } of rows) {
    const errors: RowErrors = { customer: [], location: [], debt_accounts: [], parent_debt_accounts: [] };
    const customerId = payload.customer.external_id;
    if (customerId && takenCustomers.has(customerId)) errors.customer.push({ data: payload.customer, messages: { external_id: [TAKEN] } });

    const inRow = new Set<string>();
    const claim = (externalId: string | null | undefined) => {
      if (!externalId) return true;
      const free = !takenAccounts.has(externalId) && !inRow.has(externalId);
      inRow.add(externalId);
      return free;
    };
    for (const parent of payload.parent_debt_accounts ?? []) {
      if (!claim(parent.external_id)) errors.parent_debt_accounts.push({ data: parent, messages: { external_id: [TAKEN] } });
    }
    const parents = parentIds(payload);
    for (const account of payload.debt_accounts ?? []) {
      const messages: Record<string, string[]> = {};
      if (!claim(account.external_id)) messages.external_id = [TAKEN];
      if (account.parent_external_id && !parents.has(account.parent_external_id)) messages.parent_external_id = [NO_PARENT];
      if (Object.keys(messages).length > 0) errors.debt_accounts.push({ data: account, messages });
    }

    if (Object.values(errors).some((list) => list.length > 0)) {
      failures.set(position, errors);
      continue;
    }
    if (customerId) takenCustomers.add(customerId);
    for (const id of inRow) takenAccounts.add(id);
  }
  return failures;
}
