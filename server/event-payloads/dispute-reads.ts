/**
 * The disputes a batch of payloads shows (dispute-payloads.ts builds them): those the dispute
 * events name, and every dispute of the accounts whose `debt-account.*` payload lists them
 * (`disputes`, `active_dispute`). This room's own queries, of the columns the payloads show
 * (the dispute store is the API's; a payload never reads through it); no payload builder is
 * imported here (payload-reads.ts imports this file).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { groupBy } from '../kernel/collections';
import { scoped } from '../db/tenant';

type S = components['schemas'];

const DISPUTES = 'debt_account_disputes';

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
}

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
  created_at: Date;
}

const DISPUTE_COLUMNS = [
  'id', 'debt_account_id', 'customer_id', 'reason', 'details', 'account_number', 'username', 'name', 'email', 'phone_number',
  'address_1', 'address_2', 'city', 'state', 'zip', 'status',
].map((column) => `${DISPUTES}.${column}`);
const COMMENT_COLUMNS = ['id', 'dispute_id', 'reply_to', 'comment', 'author_name', 'author_title', 'created_at'];
const FILE_COLUMNS = ['id', 'dispute_id', 'name', 'created_at'];

export interface DisputeRows {
  dispute: DisputeRow;
  comments: DisputeCommentRow[];
  files: DisputeFileRow[];
}

export interface LoadedDisputes {
  /** Every dispute loaded, by id. */
  disputes: Map<string, DisputeRows>;
  /** The disputes of each account asked for, by account id, oldest first (received). */
  ofAccount: Map<string, string[]>;
}

const OLDEST_RECEIVED = [
  { column: `${DISPUTES}.received_at`, order: 'asc' as const },
  // The sandbox's clock may stand still: two received at one moment, in the order they were recorded.
  { column: `${DISPUTES}.created_at`, order: 'asc' as const },
  { column: `${DISPUTES}.id`, order: 'asc' as const },
];

/** Oldest first, as the API lists a thread and its files. */
const OLDEST_FIRST = [{ column: 'created_at' }, { column: 'id' }];

/** The disputes named by id and those of the accounts named, with their threads and files: three queries at most. */
export async function loadDisputeRows(db: Knex, tenant: Tenant, ids: string[], accountIds: string[]): Promise<LoadedDisputes> {
  if (ids.length === 0 && accountIds.length === 0) return { disputes: new Map(), ofAccount: new Map() };
  const rows: DisputeRow[] = await scoped(db, DISPUTES, tenant)
    .where((where) => {
      if (ids.length > 0) where.whereIn(`${DISPUTES}.id`, ids);
      if (accountIds.length > 0) where.orWhereIn(`${DISPUTES}.debt_account_id`, accountIds);
    })
    .orderBy(OLDEST_RECEIVED)
    .select(DISPUTE_COLUMNS);
  const loaded = rows.map((row) => row.id);
  // The threads and files of the tenant's disputes just read: scoped through them.
  const comments = groupBy(
    loaded.length > 0 ? await db('dispute_comments').whereIn('dispute_id', loaded).orderBy(OLDEST_FIRST).select<DisputeCommentRow[]>(COMMENT_COLUMNS) : [],
    (row) => row.dispute_id,
  );
  const files = groupBy(
    loaded.length > 0 ? await db('dispute_files').whereIn('dispute_id', loaded).orderBy(OLDEST_FIRST).select<DisputeFileRow[]>(FILE_COLUMNS) : [],
    (row) => row.dispute_id,
  );
  const asked = new Set(accountIds);
  return {
    disputes: new Map(rows.map((dispute) => [dispute.id, { dispute, comments: comments.get(dispute.id) ?? [], files: files.get(dispute.id) ?? [] }])),
    ofAccount: new Map([...groupBy(rows.filter((row) => asked.has(row.debt_account_id)), (row) => row.debt_account_id)].map(([account, own]) => [account, own.map((row) => row.id)])),
  };
}
