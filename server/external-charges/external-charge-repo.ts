/** External charges and their transactions: the SQL, scoped to the tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';
import { TRANSACTION_COLUMNS, TRANSACTIONS, type TransactionRow } from '../charge-store/charge-repo';

type S = components['schemas'];

export const EXTERNAL_CHARGES = 'external_charges';

export const EXTERNAL_CHARGE_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'amount', 'paid_at', 'method', 'reference', 'note', 'status', 'reversed_at', 'reversal_reason', 'created_at', 'updated_at',
].map((column) => `${EXTERNAL_CHARGES}.${column}`);

export interface ExternalChargeRow {
  id: string;
  debt_account_id: string;
  customer_id: string;
  /** bigint: pg answers strings. */
  amount: string;
  /** A date: pg answers it as a string (the pool's type parser). */
  paid_at: string;
  method: S['ExternalChargeMethod'];
  reference: string | null;
  note: string | null;
  status: S['ExternalCharge']['status'];
  reversed_at: Date | null;
  reversal_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ExternalChargeValues = Pick<ExternalChargeRow, 'debt_account_id' | 'customer_id' | 'paid_at' | 'method' | 'reference' | 'note'> & { amount: number };

export function externalChargeRepo(db: Knex, tenant: Tenant) {
  const externalCharges = () => scoped(db, EXTERNAL_CHARGES, tenant);
  return {
    externalCharges,

    async find(id: string, { forUpdate = false } = {}): Promise<ExternalChargeRow | undefined> {
      const query = externalCharges().where(`${EXTERNAL_CHARGES}.id`, id).first(EXTERNAL_CHARGE_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<ExternalChargeRow | undefined>;
    },

    async insert(values: ExternalChargeValues): Promise<ExternalChargeRow> {
      const [row] = await db(EXTERNAL_CHARGES)
        .insert({ ...values, ...tenantColumns(tenant) })
        .returning(EXTERNAL_CHARGE_COLUMNS);
      return row as ExternalChargeRow;
    },

    async markReversed(id: string, at: Date, reason: string | null): Promise<ExternalChargeRow> {
      const [row] = await externalCharges()
        .where({ id })
        .update({ status: 'reversed', reversed_at: at, reversal_reason: reason, updated_at: db.fn.now() })
        .returning(EXTERNAL_CHARGE_COLUMNS);
      return row as ExternalChargeRow;
    },

    async insertTransactions(
      externalChargeId: string,
      kind: 'external' | 'external_reversal',
      parts: { debt_account_id: string; amount: number }[],
    ): Promise<TransactionRow[]> {
      if (parts.length === 0) return [];
      return db(TRANSACTIONS)
        .insert(
          parts.map((part) => ({ ...part, kind, status: 'succeeded', external_charge_id: externalChargeId, gateway_reference: null, ...tenantColumns(tenant) })),
        )
        .returning(TRANSACTION_COLUMNS);
    },

    /** The transactions of `ids`, oldest first, by external charge. */
    async transactionsOf(ids: string[]): Promise<Map<string, TransactionRow[]>> {
      const rows: TransactionRow[] = ids.length > 0 ? await scoped(db, TRANSACTIONS, tenant).whereIn('external_charge_id', ids).orderBy('number', 'asc').select(TRANSACTION_COLUMNS) : [];
      const byCharge = new Map<string, TransactionRow[]>(ids.map((id) => [id, []]));
      for (const row of rows) byCharge.get(row.external_charge_id!)!.push(row);
      return byCharge;
    },
  };
}
