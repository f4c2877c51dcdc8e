/** The one place where dispute rows become API objects (the comments as a thread of replies). */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { groupBy } from '../kernel/collections';
import { concurrently } from '../db/concurrently';
import { disputeRepo, type DisputeCommentRow, type DisputeFileRow, type DisputeRow } from './dispute-repo';
import { holds, type DisputeHoldPolicy } from './dispute-holds';

type S = components['schemas'];

/** Where a file is downloaded, under the API's base. */
export const disputeFilePath = (disputeId: string, fileId: string) => `/api/v1/disputes/${disputeId}/files/${fileId}`;

export function disputeFileToApi(row: DisputeFileRow): S['DisputeFile'] {
  return { id: row.id, name: row.name, url: disputeFilePath(row.dispute_id, row.id), content_type: row.content_type, size: row.size, created_at: row.created_at.toISOString() };
}

/** The comments as a thread: top-level ones oldest first, each with its replies (one level). */
export function thread(rows: DisputeCommentRow[]): S['DisputeComment'][] {
  const replies = groupBy(rows.filter((row) => row.reply_to !== null), (row) => row.reply_to!);
  const reply = (row: DisputeCommentRow): S['DisputeReply'] => ({
    id: row.id,
    comment: row.comment,
    files: [],
    author: { name: row.author_name, title: row.author_title },
    meta: null,
    created_at: row.created_at.toISOString(),
  });
  return rows.filter((row) => row.reply_to === null).map((row) => ({ ...reply(row), replies: (replies.get(row.id) ?? []).map(reply) }));
}

export function disputeToApi(row: DisputeRow, comments: DisputeCommentRow[], files: DisputeFileRow[], policy: DisputeHoldPolicy): S['Dispute'] {
  return {
    id: row.id,
    debt_account_id: row.debt_account_id,
    customer_id: row.customer_id,
    reason: row.reason,
    details: row.details,
    account_number: row.account_number,
    has_documents: files.length > 0,
    username: row.username,
    name: row.name,
    email: row.email,
    phone_number: row.phone_number,
    address_1: row.address_1,
    address_2: row.address_2,
    city: row.city,
    state: row.state,
    zip: row.zip,
    status: row.status,
    resolution: row.resolution,
    disputed_amount: Number(row.disputed_amount),
    in_writing: row.in_writing,
    received_at: row.received_at.toISOString(),
    within_validation_period: row.within_validation_period,
    source: row.source,
    hold: holds(row, policy),
    comments: thread(comments),
    files: files.map(disputeFileToApi),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    resolved_at: row.resolved_at ? row.resolved_at.toISOString() : null,
  };
}

/** Dispute rows as API objects, their comments and files loaded in one query each. */
export async function loadDisputes(db: Knex, tenant: Tenant, rows: DisputeRow[], policy: DisputeHoldPolicy): Promise<S['Dispute'][]> {
  const repo = disputeRepo(db, tenant);
  const ids = rows.map((row) => row.id);
  const [comments, files] = await concurrently(db, () => repo.comments(ids), () => repo.files(ids));
  const commentsOf = groupBy(comments, (c) => c.dispute_id);
  const filesOf = groupBy(files, (f) => f.dispute_id);
  return rows.map((row) => disputeToApi(row, commentsOf.get(row.id) ?? [], filesOf.get(row.id) ?? [], policy));
}
