/**
 * Disputes as stories: record one (an agent, the Portal, a guest), move it on, comment on it,
 * attach evidence. Each change runs in one transaction with its events; a dispute that starts
 * or stops holding its account also says `debt-account.update` for it (and its parent), and a
 * new one tells the agency by e-mail (the durable mail job).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { validationPeriodEndsOn } from '../kernel/validation-period';
import { todayUtc } from '../kernel/dates';
import { debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { customerRepo } from '../customer-store/customer-repo';
import { addressRepo } from '../customer-store/address-repo';
import { disputeRepo, type DisputeRow } from '../dispute-store/dispute-repo';
import { holds } from '../dispute-store/dispute-holds';
import { loadDisputes } from '../dispute-store/dispute-mapper';
import { readSettings } from '../settings/settings-service';
import { checkFile, type Upload } from '../files/file-types';
import type { StoredFile } from '../files/file-store';
import { enqueueIn, QUEUES } from '../jobs/queue';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { DISPUTE_COLUMNS, DISPUTES, type DisputeFilters } from '../dispute-store/dispute-repo';
import { canMove, FINAL_STATUSES } from './dispute-moves';

type S = components['schemas'];
export type DisputeDeps = Pick<AppDeps, 'db' | 'events' | 'clock' | 'files' | 'boss'>;

/** Who files a dispute besides an agent through the API. */
export interface Filing {
  source: S['DisputeSource'];
  username?: string | null;
  /** A file sent with the dispute (the Portal's form): kept with it, or the dispute is not made. */
  file?: Upload & { name: string };
  /** Runs in the dispute's transaction once it is recorded (the Portal's tracking event). */
  within?: (trx: Knex.Transaction, dispute: DisputeRow) => Promise<void>;
}

const FILE_TYPES = ['application/pdf', 'image/png', 'image/jpeg'] as const;

async function policyOf(db: Knex, tenant: Tenant) {
  return (await readSettings(db, tenant)).dispute_hold;
}

async function answer(db: Knex, tenant: Tenant, row: DisputeRow): Promise<S['Dispute']> {
  return (await loadDisputes(db, tenant, [row], await policyOf(db, tenant)))[0]!;
}

/** The account events of a hold that starts or ends: the account and its parent. */
const accountEvents = (account: Pick<DebtAccountRow, 'id' | 'parent_id'>) => [{ name: 'debt-account.update' as const, ids: [account.id, ...(account.parent_id ? [account.parent_id] : [])] }];

/** Keeps a file through the storage port, answering what to write in its row (and undo on failure). */
async function keep(deps: DisputeDeps, upload: Upload & { name: string }): Promise<{ stored: StoredFile; name: string }> {
  const type = checkFile(upload, FILE_TYPES);
  return { stored: await deps.files.put(upload.bytes, type), name: upload.name.slice(0, 255) || 'file' };
}

export async function createDispute(deps: DisputeDeps, tenant: Tenant, accountKey: string, body: S['DisputeCreate'], filing: Filing = { source: 'api' }): Promise<S['Dispute']> {
  const now = nowFor(deps.clock, tenant);
  // The file is checked and kept first: a bad file makes no dispute; a failed transaction removes it.
  const kept = filing.file ? await keep(deps, filing.file) : undefined;
  try {
    return await deps.db.transaction(async (trx) => {
      const accounts = debtAccountRepo(trx, tenant);
      const found = await accounts.find(accountKey);
      if (!found) throw ApiError.notFound('Debt account');
      // The family's lock, as a charge takes it: a charge and a dispute on one family queue.
      await accounts.lockParents([found.parent_id ?? found.id]);
      const account = (await accounts.find(found.id, { forUpdate: true }))!;
      const errors: FieldErrors = {};
      const receivedAt = body.received_at ? new Date(body.received_at) : now;
      if (receivedAt.getTime() > now.getTime()) errors.received_at = [`must not be in the future (now is ${now.toISOString()})`];
      const balance = Number(account.current_balance);
      if (body.disputed_amount !== undefined && body.disputed_amount > balance) errors.disputed_amount = [`must be at most the current balance (${balance})`];
      if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);

      const customer = (await customerRepo(trx, tenant).find(account.customer_id))!;
      const primary = (await addressRepo(trx, tenant).forCustomers([customer.id])).find((address) => address.is_primary);
      const endsOn = account.validation_notice_sent_at ? validationPeriodEndsOn(account.validation_notice_sent_at) : undefined;
      const disputes = disputeRepo(trx, tenant);
      const row = await disputes.insert({
        debt_account_id: account.id,
        customer_id: customer.id,
        reason: body.reason,
        details: body.details ?? null,
        account_number: body.account_number !== undefined ? body.account_number : account.external_account_number,
        username: filing.username ?? null,
        name: body.name ?? customer.name,
        email: body.email !== undefined ? body.email : customer.email,
        phone_number: body.phone_number !== undefined ? body.phone_number : (customer.phone?.slice(0, 32) ?? null),
        address_1: body.address_1 !== undefined ? body.address_1 : (primary?.line1 ?? null),
        address_2: body.address_2 !== undefined ? body.address_2 : (primary?.line2 ?? null),
        city: body.city !== undefined ? body.city : (primary?.city ?? null),
        state: body.state !== undefined ? body.state : (primary?.state ?? null),
        zip: body.zip !== undefined ? body.zip : /^[0-9]{5}$/.test(primary?.postal_code ?? '') ? primary!.postal_code : null,
        disputed_amount: body.disputed_amount ?? balance,
        // The Portal's disputes are in writing (Regulation F comment 38-1).
        in_writing: filing.source === 'api' ? (body.in_writing ?? true) : true,
        received_at: receivedAt,
        // An account with no notice date has not begun its period: within it.
        within_validation_period: endsOn === undefined || todayUtc(receivedAt) <= endsOn,
        source: filing.source,
      });
      if (kept) {
        await disputes.addFile({ dispute_id: row.id, name: kept.name, storage_key: kept.stored.key, content_type: kept.stored.contentType, size: kept.stored.size, sha256: kept.stored.sha256 });
      }
      const settings = await readSettings(trx, tenant);
      await deps.events.record(trx, tenant, [
        { name: 'debt-account-dispute.create', ids: [row.id] },
        ...(holds(row, settings.dispute_hold) ? accountEvents(account) : []),
      ]);
      await tellAgency(deps, trx, tenant, row, account);
      await filing.within?.(trx, row);
      return answer(trx, tenant, row);
    });
  } catch (error) {
    if (kept) await deps.files.remove(kept.stored.key);
    throw error;
  }
}

/** The agency's notice of a new dispute, to its notification e-mail (none set: none sent). */
async function tellAgency(deps: DisputeDeps, trx: Knex.Transaction, tenant: Tenant, row: DisputeRow, account: DebtAccountRow): Promise<void> {
  const organization = (await trx('organizations').where({ id: tenant.organizationId }).first('notification_email')) as { notification_email: string | null } | undefined;
  if (!organization?.notification_email) return;
  const label = account.external_id ?? account.id;
  await enqueueIn(deps.boss, trx, QUEUES.email, {
    to: organization.notification_email,
    subject: `New dispute on account ${label} (${tenant.environment})`,
    text:
      `${row.name} disputed the debt of account ${label} (${row.reason.replace(/_/g, ' ')}), received ${row.received_at.toISOString()}, ` +
      `${row.in_writing ? 'in writing' : 'not in writing'}, ${row.within_validation_period ? 'within' : 'after'} the validation period. ` +
      `Dispute ${row.id}: GET /api/v1/disputes/${row.id}. Under FDCPA §809(b) collection must stop until verification is sent.`,
  });
}

async function lockDispute(trx: Knex.Transaction, tenant: Tenant, id: string): Promise<{ dispute: DisputeRow; account: DebtAccountRow }> {
  const disputes = disputeRepo(trx, tenant);
  const unlocked = await disputes.find(id);
  if (!unlocked) throw ApiError.notFound('Dispute');
  const accounts = debtAccountRepo(trx, tenant);
  const account = (await accounts.find(unlocked.debt_account_id))!;
  await accounts.lockParents([account.parent_id ?? account.id]);
  return { dispute: (await disputes.find(id, { forUpdate: true }))!, account };
}

export async function updateDispute(deps: DisputeDeps, tenant: Tenant, id: string, body: S['DisputeUpdate']): Promise<S['Dispute']> {
  const now = nowFor(deps.clock, tenant);
  return deps.db.transaction(async (trx) => {
    const { dispute, account } = await lockDispute(trx, tenant, id);
    const policy = await policyOf(trx, tenant);
    const moving = body.status !== undefined && body.status !== dispute.status;
    if (moving && !canMove(dispute.status, body.status!)) {
      throw ApiError.conflict(
        FINAL_STATUSES.includes(dispute.status)
          ? `The dispute is ${dispute.status}, a final status; it cannot change.`
          : `A dispute cannot move from ${dispute.status} to ${body.status}.`,
      );
    }
    const updated = await disputeRepo(trx, tenant).update(dispute.id, {
      ...(moving ? { status: body.status!, ...(FINAL_STATUSES.includes(body.status!) ? { resolved_at: now } : {}) } : {}),
      ...(body.resolution !== undefined ? { resolution: body.resolution } : {}),
    });
    const holdChanged = holds(dispute, policy) !== holds(updated, policy);
    await deps.events.record(trx, tenant, [{ name: 'debt-account-dispute.update', ids: [dispute.id] }, ...(holdChanged ? accountEvents(account) : [])]);
    return answer(trx, tenant, updated);
  });
}

export async function addComment(
  deps: DisputeDeps,
  tenant: Tenant,
  id: string,
  body: S['DisputeCommentCreate'],
): Promise<S['Dispute']> {
  return deps.db.transaction(async (trx) => {
    const { dispute } = await lockDispute(trx, tenant, id);
    const disputes = disputeRepo(trx, tenant);
    if (body.reply_to && !(await disputes.comments([dispute.id])).some((comment) => comment.id === body.reply_to && comment.reply_to === null)) {
      throw ApiError.field('reply_to', 'is not a top-level comment of this dispute');
    }
    await disputes.addComment({ dispute_id: dispute.id, reply_to: body.reply_to ?? null, comment: body.comment, author_name: body.author.name, author_title: body.author.title ?? null });
    await disputes.touch(dispute.id);
    await deps.events.record(trx, tenant, [{ name: 'debt-account-dispute.update', ids: [dispute.id] }]);
    return answer(trx, tenant, (await disputes.find(dispute.id))!);
  });
}

export async function addFile(deps: DisputeDeps, tenant: Tenant, id: string, upload: (Upload & { name: string }) | undefined): Promise<S['Dispute']> {
  // Tenancy first: another tenant's dispute is a 404 before its file is even read.
  if (!(await disputeRepo(deps.db, tenant).find(id))) throw ApiError.notFound('Dispute');
  if (!upload) throw ApiError.field('file', 'is required');
  const kept = await keep(deps, upload);
  try {
    return await deps.db.transaction(async (trx) => {
      const { dispute } = await lockDispute(trx, tenant, id);
      const disputes = disputeRepo(trx, tenant);
      await disputes.addFile({ dispute_id: dispute.id, name: kept.name, storage_key: kept.stored.key, content_type: kept.stored.contentType, size: kept.stored.size, sha256: kept.stored.sha256 });
      await disputes.touch(dispute.id);
      await deps.events.record(trx, tenant, [{ name: 'debt-account-dispute.update', ids: [dispute.id] }]);
      return answer(trx, tenant, (await disputes.find(dispute.id))!);
    });
  } catch (error) {
    await deps.files.remove(kept.stored.key);
    throw error;
  }
}

export async function findDispute(db: Knex, tenant: Tenant, id: string): Promise<S['Dispute']> {
  const row = await disputeRepo(db, tenant).find(id);
  if (!row) throw ApiError.notFound('Dispute');
  return answer(db, tenant, row);
}

export async function listDisputes(db: Knex, tenant: Tenant, filters: DisputeFilters, page: PageRequest): Promise<Listed<S['Dispute']>> {
  const policy = await policyOf(db, tenant);
  return listPage<DisputeRow, S['Dispute']>(disputeRepo(db, tenant).filtered(filters), page, { columns: DISPUTE_COLUMNS, table: DISPUTES, order: 'desc' }, (rows) =>
    loadDisputes(db, tenant, rows, policy),
  );
}

/** A file's bytes and how to name it in the download; 404 for anything not of this tenant's dispute. */
export async function disputeFile(deps: Pick<AppDeps, 'db' | 'files'>, tenant: Tenant, id: string, fileId: string) {
  const row = await disputeRepo(deps.db, tenant).file(id, fileId);
  if (!row) throw ApiError.notFound('File');
  return { row, bytes: await deps.files.read(row.storage_key) };
}
