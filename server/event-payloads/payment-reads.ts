/**
 * The event payloads' reads of payments: charges, their transactions, the methods they were made
 * with and the customers' sequence numbers, batched like payload-reads.ts (one query per
 * table) and, like it, straight from the tables, so that payments depend on the events port
 * only. Runs first in a recording: what it finds names the accounts the payloads embed.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';
import { groupBy } from '../kernel/collections';
import type { ShownPaymentMethod } from '../kernel/masking';
import type { OfferRow } from './settlement-reads';

const EXTERNAL_CHARGES = 'external_charges';

/** An external charge as external-charge.create shows it (the API's shape, external-charge-mapper.ts). */
export interface ExternalChargeRow {
  id: string;
  debt_account_id: string;
  customer_id: string;
  /** bigint: pg answers strings. */
  amount: string;
  /** A date: pg answers it as a string (the pool's type parser). */
  paid_at: string;
  method: components['schemas']['ExternalChargeMethod'];
  reference: string | null;
  note: string | null;
  status: components['schemas']['ExternalCharge']['status'];
  reversed_at: Date | null;
  reversal_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

const EXTERNAL_CHARGE_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'amount', 'paid_at', 'method', 'reference', 'note', 'status', 'reversed_at', 'reversal_reason', 'created_at', 'updated_at',
].map((column) => `${EXTERNAL_CHARGES}.${column}`);

type S = components['schemas'];

/** How many charges and transactions a debt-account payload carries: as many as the API embeds. */
export const LATEST_PAYMENTS = 10;

export interface ChargeRow {
  id: string;
  debt_account_id: string;
  customer_id: string;
  payment_method_id: string | null;
  payment_method_type: 'card' | 'ach';
  card: S['CardToken'] | null;
  bank_account: S['BankAccount'] | null;
  gateway: string;
  gateway_reference: string | null;
  status: S['ChargeStatus'];
  amount: string;
  fees: string;
  refunded_amount: string;
  error: string | null;
  error_code: string | null;
  source: 'api' | 'payment_plan' | 'autopay' | 'settlement_offer';
  payment_plan_id: string | null;
  payment_plan_charge_id: string | null;
  scheduled_at: string | null;
  due_at: Date | null;
  charged_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TransactionRow {
  id: string;
  number: string;
  /** Exactly one of the two is set: a charge's transaction, or an external charge's. */
  charge_id: string | null;
  external_charge_id: string | null;
  debt_account_id: string;
  kind: S['Transaction']['type'];
  status: S['Transaction']['status'];
  amount: string;
  return_code: string | null;
  gateway_reference: string | null;
  submitted_at: Date;
  created_at: Date;
}

export interface ChargeMethodRow extends ShownPaymentMethod {
  id: string;
  customer_id: string;
  is_primary: boolean;
  /** Whether a charge still `scheduled` is made with it. */
  has_scheduled_charge: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface PaymentNeeds {
  /** Charges shown with their first transaction (charge.succeeded, charge.failed). */
  charges: Set<string>;
  /** Transactions shown one by one (ACH outcomes), or naming the void or refund they are part of. */
  transactions: Set<string>;
  /** Accounts shown with their latest charges and transactions (debt-account payloads). */
  latestOf: Set<string>;
  /** External charges shown with their transactions (external-charge.create). */
  externalCharges: Set<string>;
}

export interface PaymentRows {
  charges: Map<string, ChargeRow>;
  /** Every transaction of the charges loaded, by charge id, in the order they were made. */
  transactionsOfCharge: Map<string, TransactionRow[]>;
  transactions: Map<string, TransactionRow>;
  /** By account id, newest first, at most LATEST_PAYMENTS each. */
  latestCharges: Map<string, ChargeRow[]>;
  latestTransactions: Map<string, TransactionRow[]>;
  /** By account id, the charges still `scheduled`, soonest first (accounts of `latestOf`). */
  scheduledOf: Map<string, ChargeRow[]>;
  externalCharges: Map<string, ExternalChargeRow>;
  /** Every transaction of the external charges loaded, by external charge id, in the order they were made. */
  transactionsOfExternal: Map<string, TransactionRow[]>;
  /** The saved methods charges were made with, by id. */
  methods: Map<string, ChargeMethodRow>;
  /** The settlement offer each charge pays, by charge id (settlement-reads.ts). */
  offersOfCharges: Map<string, OfferRow>;
  /** Each customer's sequence number (the integer `customer_id` of transaction payloads). */
  customerNumbers: Map<string, number>;
  /** Every account some payment shown names: their rows must be loaded too. */
  accountIds: string[];
}

/**
 * What loadPaymentRows reads itself; the methods, customers and offers the payments name are
 * read by payload-reads.ts with the other rows of their tables (one query per table).
 */
export type LoadedPayments = Omit<PaymentRows, 'methods' | 'offersOfCharges' | 'customerNumbers'> & {
  /** The charges loaded, for the offers they pay. */
  chargeList: ChargeRow[];
  /** The saved methods the charges were made with. */
  methodIds: string[];
  /** The customers whose sequence numbers the payloads show. */
  customerIds: string[];
};

export const noPaymentNeeds = (): PaymentNeeds => ({ charges: new Set(), transactions: new Set(), latestOf: new Set(), externalCharges: new Set() });

const CHARGE_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'payment_method_id', 'payment_method_type', 'card', 'bank_account', 'gateway', 'gateway_reference',
  'status', 'amount', 'fees', 'refunded_amount', 'error', 'error_code', 'source', 'payment_plan_id', 'payment_plan_charge_id', 'scheduled_at', 'due_at', 'charged_at',
  'created_at', 'updated_at',
];
const TRANSACTION_COLUMNS = ['id', 'number', 'charge_id', 'external_charge_id', 'debt_account_id', 'kind', 'status', 'amount', 'return_code', 'gateway_reference', 'submitted_at', 'created_at'];

const byId = <T extends { id: string }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));

/**
 * The newest `LATEST_PAYMENTS` rows of `table` per account, newest first, and with `alsoWhere`
 * any other row of those accounts it matches (`recent` false): one query.
 */
async function latest<Row>(
  db: Knex,
  tenant: Tenant,
  table: string,
  columns: string[],
  accountIds: string[],
  alsoWhere?: Record<string, string>,
): Promise<(Row & { recent: boolean })[]> {
  const rows: (Row & { recency: string })[] = await db
    .select([...columns.map((column) => `ranked.${column}`), 'ranked.recency'])
    .from(
      scoped(db, table, tenant)
        .whereIn(`${table}.debt_account_id`, accountIds)
        .select([
          ...columns.map((column) => `${table}.${column}`),
          db.raw(`row_number() OVER (PARTITION BY ${table}.debt_account_id ORDER BY ${table}.created_at DESC, ${table}.id DESC) AS recency`),
        ])
        .as('ranked'),
    )
    .where((wanted) => {
      wanted.where('ranked.recency', '<=', LATEST_PAYMENTS);
      if (alsoWhere) wanted.orWhere(Object.fromEntries(Object.entries(alsoWhere).map(([column, value]) => [`ranked.${column}`, value])));
    })
    .orderBy([
      { column: 'ranked.created_at', order: 'desc' },
      { column: 'ranked.id', order: 'desc' },
    ]);
  return rows.map(({ recency, ...row }) => ({ ...(row as unknown as Row), recent: Number(recency) <= LATEST_PAYMENTS }));
}

/** Scheduled charges soonest first: by due time, then as they were made. */
const soonestFirst = (a: ChargeRow, b: ChargeRow) =>
  (a.due_at?.getTime() ?? 0) - (b.due_at?.getTime() ?? 0) || a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id);

const inOrder = (rows: TransactionRow[]) => [...rows].sort((a, b) => Number(a.number) - Number(b.number));

export async function loadPaymentRows(db: Knex, tenant: Tenant, needs: PaymentNeeds): Promise<LoadedPayments> {
  const accountsOfLatest = [...needs.latestOf];
  // With the accounts' latest charges, every one still scheduled (an account's payload lists them).
  const ofAccounts = accountsOfLatest.length > 0 ? await latest<ChargeRow>(db, tenant, 'charges', CHARGE_COLUMNS, accountsOfLatest, { status: 'scheduled' }) : [];
  const accountCharges: ChargeRow[] = ofAccounts.map(({ recent: _recent, ...row }) => row);
  const latestCharges = accountCharges.filter((_row, index) => ofAccounts[index]!.recent);
  const scheduledCharges = accountCharges.filter((row) => row.status === 'scheduled').sort(soonestFirst);
  const latestTransactions: TransactionRow[] =
    accountsOfLatest.length > 0 ? (await latest<TransactionRow>(db, tenant, 'transactions', TRANSACTION_COLUMNS, accountsOfLatest)).map(({ recent: _recent, ...row }) => row) : [];
  const named: TransactionRow[] =
    needs.transactions.size > 0 ? await scoped(db, 'transactions', tenant).whereIn('id', [...needs.transactions]).select(TRANSACTION_COLUMNS) : [];

  const chargeIds = [
    ...new Set([...needs.charges, ...named.flatMap((row) => row.charge_id ?? []), ...accountCharges.map((row) => row.id), ...latestTransactions.flatMap((row) => row.charge_id ?? [])]),
  ];
  const externalIds = [
    ...new Set([...needs.externalCharges, ...named.flatMap((row) => row.external_charge_id ?? []), ...latestTransactions.flatMap((row) => row.external_charge_id ?? [])]),
  ];
  const externalCharges: ExternalChargeRow[] =
    externalIds.length > 0 ? await scoped(db, EXTERNAL_CHARGES, tenant).whereIn(`${EXTERNAL_CHARGES}.id`, externalIds).select(EXTERNAL_CHARGE_COLUMNS) : [];
  const ofExternal: TransactionRow[] =
    externalIds.length > 0 ? await scoped(db, 'transactions', tenant).whereIn('external_charge_id', externalIds).orderBy('number', 'asc').select(TRANSACTION_COLUMNS) : [];
  // The accounts' latest charges are loaded already (same columns): only the others are read.
  const known = byId(accountCharges);
  const others = chargeIds.filter((id) => !known.has(id));
  const charges: ChargeRow[] = [
    ...chargeIds.flatMap((id) => known.get(id) ?? []),
    ...(others.length > 0 ? await scoped(db, 'charges', tenant).whereIn('id', others).select(CHARGE_COLUMNS) : []),
  ];
  const ofCharges: TransactionRow[] =
    chargeIds.length > 0 ? await scoped(db, 'transactions', tenant).whereIn('charge_id', chargeIds).orderBy('number', 'asc').select(TRANSACTION_COLUMNS) : [];

  return {
    chargeList: charges,
    methodIds: [...new Set(charges.flatMap((row) => row.payment_method_id ?? []))],
    customerIds: [...new Set([...charges.map((row) => row.customer_id), ...externalCharges.map((row) => row.customer_id)])],
    charges: byId(charges),
    transactionsOfCharge: groupBy(inOrder(ofCharges), (row) => row.charge_id!),
    transactions: byId([...ofCharges, ...ofExternal, ...named, ...latestTransactions]),
    externalCharges: byId(externalCharges),
    transactionsOfExternal: groupBy(inOrder(ofExternal), (row) => row.external_charge_id!),
    latestCharges: groupBy(latestCharges, (row) => row.debt_account_id),
    scheduledOf: groupBy(scheduledCharges, (row) => row.debt_account_id),
    latestTransactions: groupBy(latestTransactions, (row) => row.debt_account_id),
    accountIds: [
      ...new Set([...charges.map((row) => row.debt_account_id), ...ofCharges.map((row) => row.debt_account_id), ...externalCharges.map((row) => row.debt_account_id), ...ofExternal.map((row) => row.debt_account_id)]),
    ],
  };
}
