/**
 * The rules of documents an agency shares: a PDF checked by its bytes and kept by the storage
 * port, read-only (`shared`) or to sign (`pending`), in the Portal contexts it names; voided
 * only while unsigned (a signature is an audit record kept as long as the account).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { externalIdUnique, scoped, TAKEN } from '../db/tenant';
import { checkFile, type Upload } from '../files/file-types';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { documentToApi } from './document-mapper';
import { DOCUMENT_COLUMNS, DOCUMENTS, documentRepo, type DocumentContext, type DocumentRow, type DocumentStatus } from './document-repo';

type S = components['schemas'];
type Document = S['Document'];

export type DocumentDeps = Pick<AppDeps, 'db' | 'events' | 'files' | 'clock'>;

/** The form's text parts, as multipart hands them over (the validator checked each against DocumentCreate). */
export interface DocumentForm {
  name: string;
  description?: string;
  external_id?: string;
  signature_required?: 'true' | 'false';
  contexts?: DocumentContext | DocumentContext[];
}

/** Documents as API objects, their accounts' external ids and their signatures loaded in two queries. */
export async function loadDocuments(db: Knex, tenant: Tenant, rows: DocumentRow[]): Promise<Document[]> {
  if (rows.length === 0) return [];
  const accountIds = [...new Set(rows.map((row) => row.debt_account_id))];
  const accounts: { id: string; external_id: string | null }[] = await scoped(db, 'debt_accounts', tenant).whereIn('id', accountIds).select('id', 'external_id');
  const externalIds = new Map(accounts.map((account) => [account.id, account.external_id]));
  const signatures = await documentRepo(db, tenant).signaturesOf(rows.map((row) => row.id));
  return rows.map((row) => documentToApi(row, externalIds.get(row.debt_account_id) ?? null, signatures));
}

function contextsOf(form: DocumentForm): DocumentContext[] {
  const given = form.contexts === undefined ? ['account_documents' as const] : Array.isArray(form.contexts) ? form.contexts : [form.contexts];
  if (new Set(given).size !== given.length) throw ApiError.field('contexts', 'must not name a context twice');
  return given;
}

async function create({ db, events, files, clock }: DocumentDeps, tenant: Tenant, accountKey: string, form: DocumentForm, upload: Upload | undefined): Promise<Document> {
  if (!upload) throw ApiError.field('file', 'is required');
  const type = checkFile(upload, ['application/pdf']);
  const signatureRequired = form.signature_required === 'true';
  const contexts = contextsOf(form);
  if (contexts.includes('checkout') && !signatureRequired) throw ApiError.field('contexts', 'checkout needs signature_required true: a checkout document is one to sign');
  const account = await debtAccountRepo(db, tenant).find(accountKey);
  if (!account) throw ApiError.notFound('Debt account');
  if (form.external_id && (await documentRepo(db, tenant).externalIdTaken(form.external_id))) throw ApiError.field('external_id', TAKEN);
  // Kept before the row that names it commits: a failure leaves an unnamed file, never a row without its file.
  const stored = await files.put(upload.bytes, type);
  return externalIdUnique(DOCUMENTS, () =>
    db.transaction(async (trx) => {
      const row = await documentRepo(trx, tenant).insert({
        debt_account_id: account.id,
        external_id: form.external_id ?? null,
        name: form.name.trim(),
        description: form.description?.trim() || null,
        signature_required: signatureRequired,
        contexts,
        status: signatureRequired ? 'pending' : 'shared',
        file_key: stored.key,
        content_type: stored.contentType,
        size: stored.size,
        sha256: stored.sha256,
        created_at: clock(),
      });
      await events.record(trx, tenant, [{ name: 'debt-account.update', ids: [account.id] }]);
      return (await loadDocuments(trx, tenant, [row]))[0]!;
    }),
  );
}

export interface DocumentFilters {
  debt_account_id?: string;
  status?: DocumentStatus;
}

async function list({ db }: DocumentDeps, tenant: Tenant, page: PageRequest, filters: DocumentFilters): Promise<Listed<Document>> {
  const query = documentRepo(db, tenant).query();
  if (filters.status) query.where(`${DOCUMENTS}.status`, filters.status);
  if (filters.debt_account_id) {
    const account = await debtAccountRepo(db, tenant).find(filters.debt_account_id);
    query.where(`${DOCUMENTS}.debt_account_id`, account?.id ?? '00000000-0000-0000-0000-000000000000');
  }
  return listPage<DocumentRow, Document>(query, page, { columns: DOCUMENT_COLUMNS, table: DOCUMENTS, order: 'desc' }, (rows) => loadDocuments(db, tenant, rows));
}

async function findRow(db: Knex, tenant: Tenant, key: string, forUpdate = false): Promise<DocumentRow> {
  const row = await documentRepo(db, tenant).find(key, { forUpdate });
  if (!row) throw ApiError.notFound('Document');
  return row;
}

async function find({ db }: DocumentDeps, tenant: Tenant, key: string): Promise<Document> {
  return (await loadDocuments(db, tenant, [await findRow(db, tenant, key)]))[0]!;
}

async function remove({ db, events, clock }: DocumentDeps, tenant: Tenant, key: string): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await findRow(trx, tenant, key, true);
    if (row.status === 'voided') throw ApiError.conflict('The document is already voided.');
    const signed = await documentRepo(trx, tenant).signaturesOf([row.id]);
    if (signed.length > 0) throw ApiError.conflict('A signed document cannot be deleted: its signature is kept as long as the account.');
    await documentRepo(trx, tenant).update(row.id, { status: 'voided', updated_at: clock() });
    await events.record(trx, tenant, [{ name: 'debt-account.update', ids: [row.debt_account_id] }]);
  });
}

/** The stored bytes of a document, with the type they were kept as. */
async function file({ db, files }: DocumentDeps, tenant: Tenant, key: string): Promise<{ id: string; bytes: Buffer; contentType: string }> {
  const row = await findRow(db, tenant, key);
  return { id: row.id, bytes: await files.read(row.file_key), contentType: row.content_type };
}

export function documentService(deps: DocumentDeps) {
  return {
    create: (tenant: Tenant, accountKey: string, form: DocumentForm, upload: Upload | undefined) => create(deps, tenant, accountKey, form, upload),
    list: (tenant: Tenant, page: PageRequest, filters: DocumentFilters) => list(deps, tenant, page, filters),
    find: (tenant: Tenant, key: string) => find(deps, tenant, key),
    remove: (tenant: Tenant, key: string) => remove(deps, tenant, key),
    file: (tenant: Tenant, key: string) => file(deps, tenant, key),
  };
}
