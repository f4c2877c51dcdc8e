/** The one place where a document's rows become the API's Document. */
import type { components } from '../../generated/schema';
import type { DocumentRow, SignatureRow } from './document-repo';

type S = components['schemas'];

export function signatureToApi(row: SignatureRow): S['DocumentSignature'] {
  return {
    id: row.id,
    context: row.context,
    signer_name: row.signer_name,
    signed_at: row.signed_at.toISOString(),
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    consent_version: row.consent_version,
    file_sha256: row.file_sha256,
    confirmed_at: row.confirmed_at?.toISOString() ?? null,
  };
}

export function documentToApi(row: DocumentRow, accountExternalId: string | null, signatures: SignatureRow[]): S['Document'] {
  const own = signatures.filter((signature) => signature.document_id === row.id).map(signatureToApi);
  return {
    id: row.id,
    external_id: row.external_id,
    name: row.name,
    description: row.description,
    status: row.status,
    signature_required: row.signature_required,
    contexts: row.contexts,
    debt_account: { id: row.debt_account_id, external_id: accountExternalId },
    file: { content_type: 'application/pdf', size: row.size, sha256: row.sha256 },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    viewed_at: row.viewed_at?.toISOString() ?? null,
    signed_at: own[0]?.signed_at ?? null,
    signature: own[0] ?? null,
    signatures: own,
  };
}
