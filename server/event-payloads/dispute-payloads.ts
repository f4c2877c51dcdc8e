/**
 * debt-account-dispute.create and .update (spec 6.4's dispute payload): the dispute with its
 * thread and files, its customer (subset) and its account embedded; and a debt account's
 * `disputes` and `active_dispute` in its own `debt-account.*` payloads. A file's `url` is its
 * download on the API, on the host the document's `servers` name for the tenant (a payload is
 * built without a request to take a host from).
 */
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import type { DisputeCommentRow, DisputeFileRow } from './dispute-reads';
import { customerSummary, embeddedAccount } from './payloads';
import { eventTime } from './event-time';
import type { PayloadRows } from './payload-reads';

type S = components['schemas'];

/** The statuses of an open dispute, the one that holds collection (`active_dispute`, as the API reads it). */
const OPEN_STATUSES: readonly S['DisputeStatus'][] = ['pending', 'under_review'];

/** A file's download on the API (`GET /disputes/{id}/files/{fileId}`). */
const filePath = (disputeId: string, fileId: string) => `/api/v1/disputes/${disputeId}/files/${fileId}`;

const apiHost = (tenant: Tenant) => `https://${tenant.organizationId}.${tenant.environment === 'production' ? 'api' : 'sandbox'}.debt-collection.example`;

function filePayload(row: DisputeFileRow, tenant: Tenant): S['EventDisputeFile'] {
  return { id: row.id, name: row.name, url: `${apiHost(tenant)}${filePath(row.dispute_id, row.id)}`, created_at: eventTime(row.created_at) };
}

function commentsPayload(rows: DisputeCommentRow[], parent: string | null): S['EventDisputeComment'][] {
  return rows
    .filter((row) => row.reply_to === parent)
    .map((row) => ({
      id: row.id,
      comment: row.comment,
      files: [],
      author: { name: row.author_name, title: row.author_title },
      replies: commentsPayload(rows, row.id),
      meta: null,
      created_at: eventTime(row.created_at),
    }));
}

export function disputePayload(id: string, ctx: PayloadRows, tenant: Tenant): S['EventDispute'] {
  const { dispute, comments, files } = ctx.disputes.get(id)!;
  const account = ctx.accounts.get(dispute.debt_account_id)!;
  return {
    id: dispute.id,
    reason: dispute.reason,
    details: dispute.details,
    account_number: dispute.account_number,
    has_documents: files.length > 0,
    username: dispute.username,
    name: dispute.name,
    email: dispute.email,
    phone_number: dispute.phone_number,
    address_1: dispute.address_1,
    address_2: dispute.address_2,
    city: dispute.city,
    state: dispute.state,
    zip: dispute.zip,
    status: dispute.status,
    comments: commentsPayload(comments, null),
    files: files.map((file) => filePayload(file, tenant)),
    customer: customerSummary(ctx.customers.get(dispute.customer_id)!),
    debt_account: embeddedAccount(account, ctx, null),
  };
}

/**
 * A debt account's disputes (oldest first, as the document says) and its open one: the newest
 * `pending` or `under_review`, as the API's `active_dispute` reads it.
 */
export function accountDisputes(accountId: string, ctx: PayloadRows, tenant: Tenant): Pick<S['EventDebtAccount'], 'disputes' | 'active_dispute'> {
  const ids = ctx.accountDisputes.get(accountId) ?? [];
  const disputes = ids.map((id) => disputePayload(id, ctx, tenant));
  const open = ids.filter((id) => OPEN_STATUSES.includes(ctx.disputes.get(id)!.dispute.status));
  const newest = open[open.length - 1];
  return { disputes, active_dispute: newest ? disputes[ids.indexOf(newest)]! : null };
}
