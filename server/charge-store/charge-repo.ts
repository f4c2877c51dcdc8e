/** Charges, their allocations over accounts, and transactions: the SQL, scoped to the tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';

type S = components['schemas'];

export const CHARGES = 'charges';
export const ALLOCATIONS = 'charge_allocations';
export const TRANSACTIONS = 'transactions';

export const CHARGE_COLUMNS = [
  'id', 'reference_number', 'debt_account_id', 'customer_id', 'payment_method_id', 'payment_method_type', 'card', 'bank_account',
  'gateway', 'gateway_reference', 'status', 'amount', 'fees', 'refunded_amount', 'error', 'error_code', 'return_code', 'source', 'payment_plan_id', 'payment_plan_charge_id',
  'scheduled_at', 'due_at', 'charged_at', 'settles_at', 'email', 'send_email', 'metadata', 'idempotency_key', 'idempotency_scope', 'idempotency_fingerprint', 'settled_at', 'created_at', 'updated_at', 'chargebacks',
].map((column) => `${CHARGES}.${column}`);

export type ChargeStatus = S['ChargeStatus'];

export interface ChargeRow {
  id: string;
  reference_number: string;
  debt_account_id: string;
  customer_id: string;
  payment_method_id: string | null;
  payment_method_type: 'card' | 'ach';
  card: S['CardToken'] | null;
  bank_account: S['BankAccount'] | null;
  gateway: string;
  gateway_reference: string | null;
  status: ChargeStatus;
  /** bigint: pg answers strings. */
  amount: string;
  fees: string;
  refunded_amount: string;
  error: string | null;
  error_code: string | null;
  return_code: string | null;
  source: 'api' | 'payment_plan' | 'autopay' | 'settlement_offer';
  /** Set on an instalment's charge: its plan and instalment. */
  payment_plan_id: string | null;
  payment_plan_charge_id: string | null;
  /** A scheduled charge's day (pg answers dates as strings) and when it falls due, on its tenant's clock. */
  scheduled_at: string | null;
  due_at: Date | null;
  /** When a scheduled charge was carried out or canceled by the scheduler, on its tenant's clock. */
  charged_at: Date | null;
  /** When a pending ACH debit is to be asked for its outcome, on its tenant's clock. */
  settles_at: Date | null;
  email: string | null;
  send_email: boolean;
  metadata: Record<string, string>;
  idempotency_key: string | null;
  /** Whose key it is: caller, method and path (charge-idempotency.ts). */
  idempotency_scope: string | null;
  /** The keyed fingerprint of the request that made the charge; NULL on charges made before it was kept. */
  idempotency_fingerprint: string | null;
  settled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** What the processor reported of chargebacks on it, oldest first (jsonb, `[]` when none). */
  chargebacks: S['Chargeback'][];
}

export type TransactionKind = S['Transaction']['type'];
export type TransactionStatus = S['Transaction']['status'];

export const TRANSACTION_COLUMNS = ['id', 'number', 'charge_id', 'external_charge_id', 'debt_account_id', 'kind', 'status', 'amount', 'return_code', 'gateway_reference', 'submitted_at', 'created_at'].map(
  (column) => `${TRANSACTIONS}.${column}`,
);

export interface TransactionRow {
  id: string;
  number: string;
  /** Null on an external charge's transaction, which names its external charge instead. */
  charge_id: string | null;
  external_charge_id: string | null;
  debt_account_id: string;
  kind: TransactionKind;
  status: TransactionStatus;
  amount: string;
  return_code: string | null;
  gateway_reference: string | null;
  submitted_at: Date;
  created_at: Date;
}

export interface AllocationRow {
  debt_account_id: string;
  amount: string;
  refunded_amount: string;
}

type Later = 'scheduled_at' | 'due_at' | 'charged_at' | 'settles_at';
type Origin = 'source' | 'payment_plan_id' | 'payment_plan_charge_id';

export type ChargeValues = Omit<ChargeRow, 'id' | 'amount' | 'fees' | 'refunded_amount' | 'created_at' | 'updated_at' | 'settled_at' | 'chargebacks' | Origin | Later> &
  Partial<Pick<ChargeRow, Origin | Later>> & {
  amount: number;
  settled_at: Date | null;
};

/** A charge's values as its columns hold them (JSON as text). */
const columnsOf = (values: ChargeValues) => ({
  ...values,
  card: values.card && JSON.stringify(values.card),
  bank_account: values.bank_account && JSON.stringify(values.bank_account),
  metadata: JSON.stringify(values.metadata),
});

export function chargeRepo(db: Knex, tenant: Tenant) {
  const charges = () => scoped(db, CHARGES, tenant);
  const transactions = () => scoped(db, TRANSACTIONS, tenant);
  return {
    charges,
    transactions,

    async find(id: string, { forUpdate = false } = {}): Promise<ChargeRow | undefined> {
      const query = charges().where(`${CHARGES}.id`, id).first(CHARGE_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<ChargeRow | undefined>;
    },

    async findByIdempotencyKey(scope: string, key: string): Promise<ChargeRow | undefined> {
      return charges().where({ idempotency_scope: scope, idempotency_key: key }).first(CHARGE_COLUMNS);
    },

    /** The charges made under any of `keys` (scope and key each), at most one per pair (a unique index). */
    async findByIdempotencyKeys(keys: { scope: string; key: string }[]): Promise<ChargeRow[]> {
      if (keys.length === 0) return [];
      // One text for any number of keys (a named statement, db/prepared-statements.ts). Each
      // key is looked up on its own (LATERAL, LIMIT 1: a subquery the planner cannot flatten
      // into a join): a probe of the unique index charges_idempotency_scope_key_unique per key,
      // whatever the statistics say (an `IN (SELECT … unnest)`, with statistics older than the
      // table's growth, was planned as a scan of all the tenant's charges).
      return db
        .select(CHARGE_COLUMNS)
        .from(db.raw('unnest(?::text[], ?::text[]) AS wanted(scope, key)', [keys.map((each) => each.scope), keys.map((each) => each.key)]))
        .joinRaw(
          `CROSS JOIN LATERAL (SELECT * FROM ${CHARGES} WHERE ${CHARGES}.organization_id = ? AND ${CHARGES}.environment = ? AND ${CHARGES}.idempotency_key IS NOT NULL
             AND ${CHARGES}.idempotency_scope = wanted.scope AND ${CHARGES}.idempotency_key = wanted.key LIMIT 1) AS ${CHARGES}`,
          [tenant.organizationId, tenant.environment],
        );
    },

    async findByGatewayReference(reference: string, { forUpdate = false } = {}): Promise<ChargeRow | undefined> {
      const query = charges().where({ gateway_reference: reference }).first(CHARGE_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<ChargeRow | undefined>;
    },

    async insert(values: ChargeValues): Promise<ChargeRow> {
      const [row] = await db(CHARGES)
        .insert({ ...columnsOf(values), ...tenantColumns(tenant) })
        .returning(CHARGE_COLUMNS);
      return row as ChargeRow;
    },

    /** Several charges in one statement; answers their rows in the order of `values`. */
    async insertMany(values: ChargeValues[]): Promise<ChargeRow[]> {
      if (values.length === 0) return [];
      const rows = (await db(CHARGES)
        .insert(values.map((each) => ({ ...columnsOf(each), ...tenantColumns(tenant) })))
        .returning(CHARGE_COLUMNS)) as ChargeRow[];
      // RETURNING's order is not promised: each row is found again by its reference number (unique per tenant).
      const byReference = new Map(rows.map((row) => [row.reference_number, row]));
      return values.map((each) => byReference.get(each.reference_number)!);
    },

    async update(
      id: string,
      values: Partial<Pick<ChargeRow, 'status' | 'error' | 'error_code' | 'return_code' | 'settled_at' | 'payment_method_id' | 'gateway_reference' | 'charged_at' | 'settles_at'>> & {
        refunded_amount?: number;
        amount?: number;
      },
    ): Promise<ChargeRow> {
      const [row] = await charges().where({ id }).update({ ...values, updated_at: db.fn.now() }).returning(CHARGE_COLUMNS);
      return row as ChargeRow;
    },

    /** The accounts a charge paid, in the order they were paid. */
    async allocations(chargeId: string): Promise<AllocationRow[]> {
      return scoped(db, ALLOCATIONS, tenant)
        .join('debt_accounts', 'debt_accounts.id', `${ALLOCATIONS}.debt_account_id`)
        .where({ charge_id: chargeId })
        .orderBy([
          { column: 'debt_accounts.created_at', order: 'asc' },
          { column: 'debt_accounts.id', order: 'asc' },
        ])
        .select(`${ALLOCATIONS}.debt_account_id`, `${ALLOCATIONS}.amount`, `${ALLOCATIONS}.refunded_amount`);
    },

    async addRefunded(chargeId: string, accountId: string, amount: number): Promise<void> {
      await scoped(db, ALLOCATIONS, tenant)
        .where({ charge_id: chargeId, debt_account_id: accountId })
        .update({ refunded_amount: db.raw('refunded_amount + ?', [amount]) });
    },

    /**
     * What a charge the gateway took is split into, in one statement: its allocations (the parts
     * it paid, each to its account) and a transaction per part with `transaction`'s values.
     */
    async insertPaid(
      chargeId: string,
      parts: { debt_account_id: string; amount: number }[],
      transaction: { kind: TransactionKind; status: TransactionStatus; gateway_reference: string | null },
    ): Promise<TransactionRow[]> {
      if (parts.length === 0) return [];
      const allocations = db(ALLOCATIONS).insert(parts.map((part) => ({ ...part, charge_id: chargeId, ...tenantColumns(tenant) })));
      return db
        .with('allocated', allocations)
        .insert(parts.map((part) => ({ ...part, ...transaction, charge_id: chargeId, ...tenantColumns(tenant) })))
        .into(TRANSACTIONS)
        .returning(TRANSACTION_COLUMNS);
    },

    async insertTransactions(
      chargeId: string,
      rows: { debt_account_id: string; kind: TransactionKind; status: TransactionStatus; amount: number; return_code?: string | null; gateway_reference: string | null; gateway_key?: string }[],
    ): Promise<TransactionRow[]> {
      if (rows.length === 0) return [];
      return db(TRANSACTIONS)
        .insert(rows.map((row) => ({ ...row, charge_id: chargeId, ...tenantColumns(tenant) })))
        .returning(TRANSACTION_COLUMNS);
    },

    async setTransactionStatus(chargeId: string, kind: TransactionKind, status: TransactionStatus): Promise<void> {
      await transactions().where({ charge_id: chargeId, kind }).update({ status, updated_at: db.fn.now() });
    },

    /** A charge that failed after it was answered pending: its charge transactions read as a decline's (`failed`, 0). */
    async failTransactions(chargeId: string): Promise<void> {
      await transactions().where({ charge_id: chargeId, kind: 'charge' }).update({ status: 'failed', amount: 0, updated_at: db.fn.now() });
    },

    /** Whether a transaction of the charge was recorded for the gateway request `key`. */
    async hasGatewayKey(chargeId: string, key: string): Promise<boolean> {
      return (await transactions().where({ charge_id: chargeId, gateway_key: key }).first('id')) !== undefined;
    },

    async findTransaction(id: string): Promise<TransactionRow | undefined> {
      return transactions().where(`${TRANSACTIONS}.id`, id).first(TRANSACTION_COLUMNS);
    },

    async transactionsOfCharge(chargeId: string): Promise<TransactionRow[]> {
      return transactions().where({ charge_id: chargeId }).orderBy('number', 'asc').select(TRANSACTION_COLUMNS);
    },
  };
}

/** The columns a gateway's answer decides, for one charge (`answerCharges`). */
export type AnsweredRow = { id: string } & Pick<ChargeRow, 'gateway_reference' | 'status' | 'error' | 'error_code' | 'settled_at' | 'settles_at'>;

/**
 * The answers of many charges written in ONE statement (of any tenants: the caller has locked
 * each charge and checked it is its tenant's). Answers the charges as they now are, in the
 * order of `answers`.
 */
export async function answerCharges(db: Knex, answers: AnsweredRow[]): Promise<ChargeRow[]> {
  if (answers.length === 0) return [];
  const column = <K extends keyof AnsweredRow>(key: K) => answers.map((answer) => answer[key] ?? null);
  const { rows } = await db.raw<{ rows: ChargeRow[] }>(
    `UPDATE ${CHARGES}
        SET status = v.status, gateway_reference = v.gateway_reference, error = v.error, error_code = v.error_code,
            settled_at = v.settled_at, settles_at = v.settles_at, updated_at = now()
       FROM (SELECT unnest(?::uuid[]) AS id, unnest(?::text[]) AS status, unnest(?::text[]) AS gateway_reference, unnest(?::text[]) AS error,
                    unnest(?::text[]) AS error_code, unnest(?::timestamptz[]) AS settled_at, unnest(?::timestamptz[]) AS settles_at) v
      WHERE ${CHARGES}.id = ANY(?::uuid[]) AND ${CHARGES}.id = v.id
      RETURNING ${CHARGE_COLUMNS.join(', ')}`,
    // The ids twice: the second as an index condition (joined with the unnest alone, the charges could be scanned whole).
    [column('id'), column('status'), column('gateway_reference'), column('error'), column('error_code'), column('settled_at'), column('settles_at'), column('id')] as unknown as Knex.RawBinding[],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return answers.map((answer) => byId.get(answer.id)!);
}

/** A row of money one charge made: on each account it paid, its allocation (when `allocated`) and its transaction. */
export interface MoneyRow {
  tenant: Tenant;
  charge_id: string;
  debt_account_id: string;
  amount: number;
  kind: TransactionKind;
  status: TransactionStatus;
  gateway_reference: string | null;
  /** A part the charge paid (an allocation too); a failed charge's row of 0 is a transaction only. */
  allocated: boolean;
}

/** The allocations and transactions of many charges (of any tenants), in ONE statement, transactions in the order of `rows`. */
export async function insertMoney(db: Knex, rows: MoneyRow[]): Promise<void> {
  if (rows.length === 0) return;
  const transactions = rows.map(({ tenant, allocated: _allocated, ...row }) => ({ ...row, ...tenantColumns(tenant) }));
  const allocations = rows
    .filter((row) => row.allocated)
    .map((row) => ({ charge_id: row.charge_id, debt_account_id: row.debt_account_id, amount: row.amount, ...tenantColumns(row.tenant) }));
  const insert = allocations.length > 0 ? db.with('allocated', db(ALLOCATIONS).insert(allocations)).insert(transactions) : db.insert(transactions);
  await insert.into(TRANSACTIONS);
}

/** The latest `limit` charges and transactions of each account, newest first: one query each. */
export async function latestOfAccounts(db: Knex, tenant: Tenant, accountIds: string[], limit: number): Promise<{ charges: ChargeRow[]; transactions: TransactionRow[] }> {
  if (accountIds.length === 0) return { charges: [], transactions: [] };
  const latest = (table: string, columns: string[]) =>
    db
      .select(columns.map((column) => column.replace(`${table}.`, 'ranked.')))
      .from(
        scoped(db, table, tenant)
          .whereIn(`${table}.debt_account_id`, accountIds)
          .select(`${table}.*`, db.raw(`row_number() OVER (PARTITION BY ${table}.debt_account_id ORDER BY ${table}.created_at DESC, ${table}.id DESC) AS rank`))
          .as('ranked'),
      )
      .where('ranked.rank', '<=', limit)
      .orderBy([
        { column: 'ranked.created_at', order: 'desc' },
        { column: 'ranked.id', order: 'desc' },
      ]);
  const [charges, transactions] = [await latest(CHARGES, CHARGE_COLUMNS), await latest(TRANSACTIONS, TRANSACTION_COLUMNS)];
  return { charges: charges as ChargeRow[], transactions: transactions as TransactionRow[] };
}

