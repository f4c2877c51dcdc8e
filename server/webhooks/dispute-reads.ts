/**
 * The disputes a batch of payloads shows (dispute-payloads.ts builds them): those the dispute
 * events name, and every dispute of the accounts whose `debt-account.*` payload lists them
 * (`disputes`, `active_dispute`). Read through the dispute store, like the API's reads; no
 * payload builder is imported here (payload-reads.ts imports this file).
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { groupBy } from '../kernel/collections';
import { DISPUTE_COLUMNS, DISPUTES, disputeRepo, type DisputeCommentRow, type DisputeFileRow, type DisputeRow } from '../dispute-store/dispute-repo';

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

/** The disputes named by id and those of the accounts named, with their threads and files: three queries at most. */
export async function loadDisputeRows(db: Knex, tenant: Tenant, ids: string[], accountIds: string[]): Promise<LoadedDisputes> {
  if (ids.length === 0 && accountIds.length === 0) return { disputes: new Map(), ofAccount: new Map() };
  const repo = disputeRepo(db, tenant);
  const rows: DisputeRow[] = await repo
    .query()
    .where((where) => {
      if (ids.length > 0) where.whereIn(`${DISPUTES}.id`, ids);
      if (accountIds.length > 0) where.orWhereIn(`${DISPUTES}.debt_account_id`, accountIds);
    })
    .orderBy(OLDEST_RECEIVED)
    .select(DISPUTE_COLUMNS);
  const loaded = rows.map((row) => row.id);
  const comments = groupBy(await repo.comments(loaded), (row) => row.dispute_id);
  const files = groupBy(await repo.files(loaded), (row) => row.dispute_id);
  const asked = new Set(accountIds);
  return {
    disputes: new Map(rows.map((dispute) => [dispute.id, { dispute, comments: comments.get(dispute.id) ?? [], files: files.get(dispute.id) ?? [] }])),
    ofAccount: new Map([...groupBy(rows.filter((row) => asked.has(row.debt_account_id)), (row) => row.debt_account_id)].map(([account, own]) => [account, own.map((row) => row.id)])),
  };
}
