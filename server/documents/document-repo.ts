/** The SQL of documents and their signatures; every query scoped to the tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { externalIdTaken, scoped, tenantColumns, whereIdOrExternalId } from '../db/tenant';

type S = components['schemas'];
export type DocumentStatus = S['DocumentStatus'];
export type DocumentContext = S['DocumentContext'];

export const DOCUMENTS = 'documents';
export const SIGNATURES = 'document_signatures';

export const DOCUMENT_COLUMNS = [
  'id',
  'debt_account_id',
  'external_id',
  'name',
  'description',
  'signature_required',
  'contexts',
  'status',
  'file_key',
  'content_type',
  'size',
  'sha256',
  'viewed_at',
  'created_at',
  'updated_at',
].map((column) => `${DOCUMENTS}.${column}`);

const SIGNATURE_COLUMNS = ['id', 'document_id', 'context', 'customer_id', 'signer_name', 'signed_at', 'ip_address', 'user_agent', 'consent_version', 'file_sha256', 'confirmed_at'];

export interface DocumentRow {
  id: string;
  debt_account_id: string;
  external_id: string | null;
  name: string;
  description: string | null;
  signature_required: boolean;
  contexts: DocumentContext[];
  status: DocumentStatus;
  file_key: string;
  content_type: string;
  size: number;
  sha256: string;
  viewed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SignatureRow {
  id: string;
  document_id: string;
  context: DocumentContext;
  customer_id: string | null;
  signer_name: string;
  signed_at: Date;
  ip_address: string;
  user_agent: string;
  consent_version: string;
  file_sha256: string;
  confirmed_at: Date | null;
}

export type NewDocument = Omit<DocumentRow, 'id' | 'viewed_at' | 'updated_at'>;
export type NewSignature = Omit<SignatureRow, 'id'>;

export function documentRepo(db: Knex, tenant: Tenant) {
  const documents = () => scoped(db, DOCUMENTS, tenant);
  const signatures = () => scoped(db, SIGNATURES, tenant);
  return {
    query: documents,

    async find(key: string, { forUpdate = false } = {}): Promise<DocumentRow | undefined> {
      const query = whereIdOrExternalId(documents(), DOCUMENTS, key).first(DOCUMENT_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<DocumentRow | undefined>;
    },

    externalIdTaken: (externalId: string) => externalIdTaken(documents(), externalId),

    async insert(values: NewDocument): Promise<DocumentRow> {
      const [row] = await db(DOCUMENTS)
        .insert({ ...tenantColumns(tenant), ...values, updated_at: values.created_at })
        .returning(DOCUMENT_COLUMNS.map((column) => column.replace(`${DOCUMENTS}.`, '')));
      return row as DocumentRow;
    },

    async update(id: string, changes: Partial<Pick<DocumentRow, 'status' | 'viewed_at' | 'updated_at'>>): Promise<DocumentRow> {
      const [row] = await documents().where('id', id).update(changes).returning(DOCUMENT_COLUMNS.map((column) => column.replace(`${DOCUMENTS}.`, '')));
      return row as DocumentRow;
    },

    /** The account's documents a customer may see (not voided), oldest first; of one context when given. */
    async shownOf(accountId: string, context?: DocumentContext): Promise<DocumentRow[]> {
      const query = documents().where('debt_account_id', accountId).whereNot('status', 'voided').orderBy([{ column: 'created_at' }, { column: 'id' }]);
      if (context) query.whereRaw('? = ANY(contexts)', [context]);
      return query.select(DOCUMENT_COLUMNS);
    },

    /** Signatures of `documentIds`, oldest first. */
    async signaturesOf(documentIds: string[]): Promise<SignatureRow[]> {
      if (documentIds.length === 0) return [];
      return signatures().whereIn('document_id', documentIds).orderBy([{ column: 'signed_at' }, { column: 'id' }]).select(SIGNATURE_COLUMNS);
    },

    async insertSignature(values: NewSignature): Promise<SignatureRow> {
      const [row] = await db(SIGNATURES).insert({ ...tenantColumns(tenant), ...values }).returning(SIGNATURE_COLUMNS);
      return row as SignatureRow;
    },

    /** The checkout signatures of the account whose payment has not gone through yet, locked. */
    async unconfirmedCheckoutSignatures(accountId: string): Promise<SignatureRow[]> {
      return signatures()
        .join(DOCUMENTS, `${DOCUMENTS}.id`, `${SIGNATURES}.document_id`)
        .where(`${DOCUMENTS}.debt_account_id`, accountId)
        .where(`${SIGNATURES}.context`, 'checkout')
        .whereNull(`${SIGNATURES}.confirmed_at`)
        .orderBy(`${SIGNATURES}.signed_at`)
        .forUpdate()
        .select(SIGNATURE_COLUMNS.map((column) => `${SIGNATURES}.${column}`));
    },

    async confirm(ids: string[], at: Date): Promise<void> {
      if (ids.length > 0) await signatures().whereIn('id', ids).update({ confirmed_at: at });
    },
  };
}
