import type { components } from '../../generated/schema';
import { metadataToApi } from '../customer-store/customer-mapper';
import type { LocationRow } from './location-repo';

export function locationToApi(row: LocationRow, debtAccountsCount: number): components['schemas']['Location'] {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    external_id: row.external_id,
    // Location rules cannot be set through the API yet (see the document).
    rules: {},
    card: row.card,
    ach: row.ach,
    metadata: metadataToApi(row.metadata),
    debt_accounts_count: debtAccountsCount,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
