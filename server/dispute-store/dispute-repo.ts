/**
 * The SQL of disputes, their comments and files: below every feature that shows a dispute (the
 * debt account's reads, the disputes module, the webhooks), as the charge store is below
 * payments. Every query is scoped to the tenant through its dispute row.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';

export const DISPUTES = 'debt_account_disputes';
export const DISPUTE_COMMENTS = 'dispute_comments';
export const DISPUTE_FILES = 'dispute_files';

type S = components['schemas'];

/** The statuses during which a dispute may hold collection. */
export const OPEN_STATUSES: S['DisputeStatus'][] = ['pending', 'under_review'];

export interface DisputeRow {
  id: string;
  debt_account_id: string;
  customer_id: string;
  reason: S['DisputeReason'];
  details: string | null;
  account_number: string | null;
  username: string | null;
  name: string;
  email: string | null;
  phone_number: string | null;
  address_1: string | null;
  address_2: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  status: S['DisputeStatus'];
  resolution: string | null;
  /** bigint: a string from pg. */
  disputed_amount: string;
  in_writing: boolean;
  received_at: Date;
  within_validation_period: boolean;
  source: S['DisputeSource'];
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type DisputeValues = Omit<DisputeRow, 'id' | 'status' | 'resolution' | 'resolved_at' | 'created_at' | 'updated_at' | 'disputed_amount'> & {
  disputed_amount: number;
};

export interface DisputeCommentRow {
  id: string;
  dispute_id: string;
  reply_to: string | null;
  comment: string;
  author_name: string;
  author_title: string | null;
  created_at: Date;
}

export interface DisputeFileRow {
  id: string;
  dispute_id: string;
  name: string;
  storage_key: string;
  content_type: S['DisputeFile']['content_type'];
  size: number;
  sha256: string;
  created_at: Date;
}

export const DISPUTE_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'reason', 'details', 'account_number', 'username', 'name', 'email', 'phone_number',
  'address_1', 'address_2', 'city', 'state', 'zip', 'status', 'resolution', 'disputed_amount', 'in_writing', 'received_at',
  'within_validation_period', 'source', 'resolved_at', 'created_at', 'updated_at',
].map((column) => `${DISPUTES}.${column}`);

export interface DisputeFilters {
  debt_account_id?: string;
  customer_id?: string;
  status?: S['DisputeStatus'];
}

export function disputeRepo(db: Knex, tenant: Tenant) {
  const disputes = () => scoped(db, DISPUTES, tenant);
  return {
    query: disputes,

    async insert(values: DisputeValues): Promise<DisputeRow> {
      const [row] = await db(DISPUTES).insert({ ...values, ...tenantColumns(tenant) }).returning(DISPUTE_COLUMNS.map((c) => c.split('.')[1]!));
      return row as DisputeRow;
    },

    async find(id: string, options: { forUpdate?: boolean } = {}): Promise<DisputeRow | undefined> {
      const query = disputes().where(`${DISPUTES}.id`, id).first(DISPUTE_COLUMNS);
      if (options.forUpdate) query.forUpdate();
      return query as Promise<DisputeRow | undefined>;
    },

    async update(id: string, values: Partial<Pick<DisputeRow, 'status' | 'resolution' | 'resolved_at'>>): Promise<DisputeRow> {
      const [row] = await disputes()
        .where({ id })
        .update({ ...values, updated_at: db.fn.now() })
        .returning(DISPUTE_COLUMNS.map((c) => c.split('.')[1]!));
      return row as DisputeRow;
    },

    /**
     * An account moved to another customer: its disputes follow it (a dispute is about the
     * account; the name and contact it was filed with stay as they were written).
     */
    async followAccount(accountId: string, customerId: string): Promise<void> {
      await disputes().where({ debt_account_id: accountId }).whereNot({ customer_id: customerId }).update({ customer_id: customerId, updated_at: db.fn.now() });
    },

    /** Marks the dispute changed (a comment or a file was added). */
    async touch(id: string): Promise<void> {
      await disputes().where({ id }).update({ updated_at: db.fn.now() });
    },

    filtered(filters: DisputeFilters): Knex.QueryBuilder {
      const query = disputes();
      if (filters.debt_account_id) query.where(`${DISPUTES}.debt_account_id`, filters.debt_account_id);
      if (filters.customer_id) query.where(`${DISPUTES}.customer_id`, filters.customer_id);
      if (filters.status) query.where(`${DISPUTES}.status`, filters.status);
      return query;
    },

    /** Every dispute of these accounts, newest first. */
    async ofAccounts(accountIds: string[]): Promise<DisputeRow[]> {
      if (accountIds.length === 0) return [];
      return disputes()
        .whereIn(`${DISPUTES}.debt_account_id`, accountIds)
        .orderBy([
          { column: `${DISPUTES}.received_at`, order: 'desc' },
          { column: `${DISPUTES}.id`, order: 'desc' },
        ])
        .select(DISPUTE_COLUMNS) as Promise<DisputeRow[]>;
    },

    /** Open disputes of these accounts (what may hold them). */
    async openOf(accountIds: string[]): Promise<DisputeRow[]> {
      if (accountIds.length === 0) return [];
      return disputes().whereIn(`${DISPUTES}.debt_account_id`, accountIds).whereIn(`${DISPUTES}.status`, OPEN_STATUSES).select(DISPUTE_COLUMNS) as Promise<DisputeRow[]>;
    },

    async comments(disputeIds: string[]): Promise<DisputeCommentRow[]> {
      if (disputeIds.length === 0) return [];
      return db(DISPUTE_COMMENTS).whereIn('dispute_id', disputeIds).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('*');
    },

    async files(disputeIds: string[]): Promise<DisputeFileRow[]> {
      if (disputeIds.length === 0) return [];
      return db(DISPUTE_FILES).whereIn('dispute_id', disputeIds).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('*');
    },

    async addComment(values: Omit<DisputeCommentRow, 'id' | 'created_at'>): Promise<DisputeCommentRow> {
      const [row] = await db(DISPUTE_COMMENTS).insert(values).returning('*');
      return row as DisputeCommentRow;
    },

    async addFile(values: Omit<DisputeFileRow, 'id' | 'created_at'>): Promise<DisputeFileRow> {
      const [row] = await db(DISPUTE_FILES).insert(values).returning('*');
      return row as DisputeFileRow;
    },

    /** A file of a dispute of this tenant (the dispute row scopes it). */
    async file(disputeId: string, fileId: string): Promise<DisputeFileRow | undefined> {
      return db(DISPUTE_FILES)
        .join(DISPUTES, `${DISPUTES}.id`, `${DISPUTE_FILES}.dispute_id`)
        .where(`${DISPUTES}.organization_id`, tenant.organizationId)
        .where(`${DISPUTES}.environment`, tenant.environment)
        .where(`${DISPUTE_FILES}.dispute_id`, disputeId)
        .where(`${DISPUTE_FILES}.id`, fileId)
        .first(`${DISPUTE_FILES}.*`);
    },
  };
}
