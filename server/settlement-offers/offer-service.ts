/**
 * Settlement offers through the API: make one on an account (within the organization's two
 * maximums), list, read and revoke them. Accepting one is offer-acceptance.ts; what money and
 * time do to them is offer-lifecycle.ts.
 */
import type { components } from '../../generated/schema';
import type { AppDeps } from '../deps';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { nowFor } from '../kernel/clock';
import { isUniqueViolation } from '../db/tenant';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { readSettings } from '../settings/settings-service';
import { lockAccount } from '../payments/balances';
import { debtAccountRepo } from '../debt-accounts/debt-account-repo';
import { termsOf } from '../payment-terms/payment-terms';
import { offerToApi } from './offer-mapper';
import { OFFER_COLUMNS, offerRepo, SETTLEMENT_OFFERS, type OfferRow, type OfferStatus } from './offer-repo';
import { offerOf } from './offer-terms';
import { revokeOffer } from './offer-lifecycle';

type S = components['schemas'];
type Offer = S['SettlementOffer'];

export type OfferDeps = Pick<AppDeps, 'db' | 'events' | 'clock'>;

export const offerNotFound = () => ApiError.notFound('Settlement offer');
const openOfferConflict = () => ApiError.conflict('The debt account already has a pending or accepted settlement offer; revoke it or let it end first.');

async function create({ db, events, clock }: OfferDeps, tenant: Tenant, accountKey: string, body: S['SettlementOfferCreate']): Promise<Offer> {
  const now = nowFor(clock, tenant);
  const settings = await readSettings(db, tenant);
  try {
    return await db.transaction(async (trx) => {
      const family = await lockAccount(trx, tenant, accountKey);
      if (!family) throw ApiError.notFound('Debt account');
      const { account } = family;
      if (account.parent_id) throw ApiError.field('debt_account_id', 'the account is a child account: a settlement settles its parent');
      const terms = termsOf(account);
      if (terms.refusal) throw ApiError.field('debt_account_id', terms.refusal.message);
      if (terms.balance < 2) throw ApiError.field('debt_account_id', 'the balance is too small to settle for less (at least 2 cents)');
      const made = offerOf(terms.balance, body, { maxDiscountPercentage: settings.settlement_max_discount_percentage, maxMonths: settings.settlement_max_months }, now);
      if ('errors' in made) throw ApiError.invalid(made.errors);
      const offers = offerRepo(trx, tenant);
      if ((await offers.openOf([account.id])).length > 0) throw openOfferConflict();
      const row = await offers.insert({ ...made.offer, debt_account_id: account.id }, now);
      await events.record(trx, tenant, [
        { name: 'debt-account-settlement-offer.create', ids: [row.id] },
        { name: 'debt-account.update', ids: [account.id] },
      ]);
      return offerToApi(row);
    });
  } catch (error) {
    if (isUniqueViolation(error, 'settlement_offers_one_open_per_account')) throw openOfferConflict();
    throw error;
  }
}

async function list({ db }: OfferDeps, tenant: Tenant, page: PageRequest, filter: { debt_account_id?: string; status?: OfferStatus }): Promise<Listed<Offer>> {
  const query = offerRepo(db, tenant).query();
  if (filter.debt_account_id) {
    // An unknown account has no offers: an empty page, not an error.
    query.where('debt_account_id', (await debtAccountRepo(db, tenant).find(filter.debt_account_id))?.id ?? '00000000-0000-0000-0000-000000000000');
  }
  if (filter.status) query.where('status', filter.status);
  return listPage<OfferRow, Offer>(query, page, { columns: OFFER_COLUMNS, table: SETTLEMENT_OFFERS, order: 'desc' }, (rows) => rows.map(offerToApi));
}

async function find({ db }: OfferDeps, tenant: Tenant, id: string): Promise<Offer> {
  const row = await offerRepo(db, tenant).find(id);
  if (!row) throw offerNotFound();
  return offerToApi(row);
}

async function revoke({ db, events, clock }: OfferDeps, tenant: Tenant, id: string): Promise<Offer> {
  const now = nowFor(clock, tenant);
  return db.transaction(async (trx) => {
    const row = await offerRepo(trx, tenant).find(id, { forUpdate: true });
    if (!row) throw offerNotFound();
    if (row.status !== 'pending') throw ApiError.conflict(`The settlement offer is ${row.status}; only a pending offer can be revoked.`);
    return offerToApi(await revokeOffer(trx, events, tenant, row, now));
  });
}

export function offerService(deps: OfferDeps) {
  return {
    create: (tenant: Tenant, accountKey: string, body: S['SettlementOfferCreate']) => create(deps, tenant, accountKey, body),
    list: (tenant: Tenant, page: PageRequest, filter: { debt_account_id?: string; status?: OfferStatus }) => list(deps, tenant, page, filter),
    find: (tenant: Tenant, id: string) => find(deps, tenant, id),
    revoke: (tenant: Tenant, id: string) => revoke(deps, tenant, id),
  };
}
