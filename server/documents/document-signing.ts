/**
 * What a customer does with a document in the Portal: opening it records `viewed_at` (the
 * first time), and signing it records the audit record — name as typed, time, IP, user agent,
 * the consent's version and the SHA-256 of the bytes as they are at signing — in one context.
 * A signature in `account_documents` is told at once; one in `checkout` when the payment it was
 * given for goes through (`confirmCheckoutSignatures`, from the checkout's own transaction).
 */
import type { Knex } from 'knex';
import { createHash } from 'node:crypto';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import type { DocumentDeps } from './document-service';
import { documentRepo, type DocumentContext, type DocumentRow, type SignatureRow } from './document-repo';
import { CURRENT_CONSENT } from './esign-consent';

export const SIGNER_NAME_MAX = 255;
export const USER_AGENT_MAX = 1024;

/** The account's document a customer may see, or a 404 (another account's, a voided one, another context's). */
export async function shownDocument(db: Knex, tenant: Tenant, accountId: string, documentId: string, context?: DocumentContext): Promise<DocumentRow> {
  const row = (await documentRepo(db, tenant).shownOf(accountId, context)).find((document) => document.id === documentId);
  if (!row) throw ApiError.notFound('Document');
  return row;
}

/** Stamps the first opening: a document to sign goes `pending` → `viewed`, one to read `shared` → `viewed`. */
export async function markViewed({ db, clock }: Pick<DocumentDeps, 'db' | 'clock'>, tenant: Tenant, row: DocumentRow): Promise<void> {
  if (row.viewed_at) return;
  const now = clock();
  await documentRepo(db, tenant).query().where('id', row.id).whereNull('viewed_at').update({
    viewed_at: now,
    status: db.raw(`CASE WHEN status IN ('pending', 'shared') THEN 'viewed' ELSE status END`),
    updated_at: now,
  });
}

export interface SignRequest {
  accountId: string;
  documentId: string;
  context: DocumentContext;
  customerId: string;
  signerName: string;
  /** The consent box was ticked. */
  consent: boolean;
  /** The consent version the form showed. */
  consentVersion: string;
  ip: string;
  userAgent: string;
}

export interface Signed {
  document: DocumentRow;
  signature: SignatureRow;
}

/**
 * Records a signature, or a 422 that records nothing. `within` runs in the same transaction
 * (the Portal records its tracking there): a signature and what tells of it commit together.
 */
export async function signDocument(
  { db, events, files, clock }: DocumentDeps,
  tenant: Tenant,
  request: SignRequest,
  within?: (trx: Knex.Transaction, signed: Signed, told: boolean) => Promise<void>,
): Promise<Signed> {
  const name = request.signerName.trim();
  const errors: Record<string, string[]> = {};
  if (name.length === 0) errors.signer_name = ['Type your full name to sign.'];
  else if (name.length > SIGNER_NAME_MAX) errors.signer_name = [`Your name can be at most ${SIGNER_NAME_MAX} characters.`];
  if (!request.consent) errors.consent = ['Tick "I agree to sign electronically" to sign.'];
  else if (request.consentVersion !== CURRENT_CONSENT.version) errors.consent = ['The consent text has changed: read it again and tick the box.'];
  if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);

  return db.transaction(async (trx) => {
    const repo = documentRepo(trx, tenant);
    const shown = await shownDocument(trx, tenant, request.accountId, request.documentId, request.context);
    const document = (await repo.find(shown.id, { forUpdate: true }))!;
    if (!document.signature_required) throw ApiError.field('document', 'is not one to sign');
    if ((await repo.signaturesOf([document.id])).some((signature) => signature.context === request.context)) {
      throw ApiError.conflict('You have already signed this document here.');
    }
    const now = clock();
    // The bytes as they are now, hashed again: the record names what was signed, not what was uploaded.
    const bytes = await files.read(document.file_key);
    const told = request.context === 'account_documents';
    const signature = await repo.insertSignature({
      document_id: document.id,
      context: request.context,
      customer_id: request.customerId,
      signer_name: name,
      signed_at: now,
      ip_address: request.ip.slice(0, 64),
      user_agent: request.userAgent.slice(0, USER_AGENT_MAX),
      consent_version: CURRENT_CONSENT.version,
      file_sha256: createHash('sha256').update(bytes).digest('hex'),
      confirmed_at: told ? now : null,
    });
    const updated = await repo.update(document.id, { status: 'signed', updated_at: now, ...(document.viewed_at ? {} : { viewed_at: now }) });
    if (told) await events.record(trx, tenant, [{ name: 'signature-document.signed', ids: [signature.id] }]);
    const signed = { document: updated, signature };
    if (within) await within(trx, signed, told);
    return signed;
  });
}

/** The account's checkout documents not yet signed in `checkout`: the checkout's pay button waits for them. */
export async function unsignedCheckoutDocuments(db: Knex, tenant: Tenant, accountId: string): Promise<DocumentRow[]> {
  const repo = documentRepo(db, tenant);
  const shown = await repo.shownOf(accountId, 'checkout');
  const signed = new Set((await repo.signaturesOf(shown.map((row) => row.id))).filter((row) => row.context === 'checkout').map((row) => row.document_id));
  return shown.filter((row) => row.signature_required && !signed.has(row.id));
}

/**
 * The payment of a checkout went through (called in its transaction): every checkout signature
 * of the account still waiting is confirmed and told, once. Answers them.
 */
export async function confirmCheckoutSignatures(trx: Knex.Transaction, events: DocumentDeps['events'], tenant: Tenant, accountId: string, now: Date): Promise<SignatureRow[]> {
  const repo = documentRepo(trx, tenant);
  const waiting = await repo.unconfirmedCheckoutSignatures(accountId);
  if (waiting.length === 0) return [];
  await repo.confirm(waiting.map((row) => row.id), now);
  await events.record(trx, tenant, waiting.map((row) => ({ name: 'signature-document.signed' as const, ids: [row.id] })));
  return waiting;
}
