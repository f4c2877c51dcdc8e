/** What the Portal reads of an account's offers: the pending one, shown first. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { offerRepo, OFFER_COLUMNS, type OfferRow } from './offer-repo';

/** The account's `pending` offer that has not lapsed at `now`; undefined without one. */
export async function pendingOfferOf(db: Knex, tenant: Tenant, accountId: string, now: Date): Promise<OfferRow | undefined> {
  const row = (await offerRepo(db, tenant).query().where({ debt_account_id: accountId, status: 'pending' }).first(OFFER_COLUMNS)) as OfferRow | undefined;
  return row && (!row.expires_at || row.expires_at.getTime() > now.getTime()) ? row : undefined;
}
