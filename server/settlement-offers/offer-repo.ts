/** The SQL of settlement offers, every query scoped to one tenant. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';

export const SETTLEMENT_OFFERS = 'settlement_offers';

export type OfferStatus = components['schemas']['SettlementOfferStatus'];
export type OfferOption = components['schemas']['SettlementOfferOption'];

/** The two states an offer can still leave; the index allows one of them per account. */
export const OPEN_OFFER_STATUSES: OfferStatus[] = ['pending', 'accepted'];

export const OFFER_COLUMNS = [
  'id', 'debt_account_id', 'name', 'status', 'amount', 'discount', 'discount_percentage', 'discounted_amount', 'months_period', 'allowed', 'expires_at',
  'accepted_option', 'accepted_at', 'completed_at', 'ended_at', 'charge_id', 'payment_plan_id', 'payment_method_id', 'write_off_charge_id', 'created_at', 'updated_at',
].map((column) => `${SETTLEMENT_OFFERS}.${column}`);

export interface OfferRow {
  id: string;
  debt_account_id: string;
  name: string;
  status: OfferStatus;
  /** bigint and numeric: pg answers strings. */
  amount: string;
  discount: string;
  discount_percentage: string;
  discounted_amount: string;
  months_period: number;
  allowed: OfferOption[];
  expires_at: Date | null;
  accepted_option: OfferOption | null;
  accepted_at: Date | null;
  completed_at: Date | null;
  ended_at: Date | null;
  charge_id: string | null;
  payment_plan_id: string | null;
  payment_method_id: string | null;
  /** The charge whose transactions carry the write-off (set on completion; its reversal uses it too). */
  write_off_charge_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewOffer {
  debt_account_id: string;
  name: string;
  amount: number;
  discount: number;
  discount_percentage: number;
  discounted_amount: number;
  months_period: number;
  allowed: OfferOption[];
  expires_at: Date | null;
}

export type OfferValues = Partial<Pick<OfferRow, 'status' | 'accepted_option' | 'accepted_at' | 'completed_at' | 'ended_at' | 'charge_id' | 'payment_plan_id' | 'payment_method_id' | 'write_off_charge_id'>>;

export function offerRepo(db: Knex, tenant: Tenant) {
  const offers = () => scoped(db, SETTLEMENT_OFFERS, tenant);
  return {
    query: offers,

    async insert(values: NewOffer, now: Date): Promise<OfferRow> {
      const [row] = await db(SETTLEMENT_OFFERS)
        .insert({ ...values, allowed: db.raw('?::text[]', [values.allowed]), ...tenantColumns(tenant), created_at: now, updated_at: now })
        .returning(OFFER_COLUMNS.map((column) => column.replace(`${SETTLEMENT_OFFERS}.`, '')));
      return row as OfferRow;
    },

    async find(id: string, { forUpdate = false } = {}): Promise<OfferRow | undefined> {
      const query = offers().where(`${SETTLEMENT_OFFERS}.id`, id).first(OFFER_COLUMNS);
      return (await (forUpdate ? query.forUpdate() : query)) as OfferRow | undefined;
    },

    /** The `pending` or `accepted` offers of `accountIds`, locked (the caller holds the accounts' locks). */
    async openOf(accountIds: string[], status: OfferStatus[] = OPEN_OFFER_STATUSES): Promise<OfferRow[]> {
      if (accountIds.length === 0) return [];
      return (await offers().whereIn('debt_account_id', accountIds).whereIn('status', status).forUpdate().select(OFFER_COLUMNS)) as OfferRow[];
    },

    /** The open offer that the charge `chargeId` or the plan `planId` pays, locked. */
    async paidBy(link: { chargeId?: string; planId?: string }): Promise<OfferRow | undefined> {
      const query = offers().where('status', 'accepted');
      if (link.chargeId) query.where('charge_id', link.chargeId);
      else query.where('payment_plan_id', link.planId!);
      return (await query.forUpdate().first(OFFER_COLUMNS)) as OfferRow | undefined;
    },

    /** The latest `completed` offer that the charge paid (its charge, an instalment of its plan, or the payment that completed it), locked. */
    async completedBy(charge: { id: string; payment_plan_id: string | null }): Promise<OfferRow | undefined> {
      const query = offers()
        .where('status', 'completed')
        .where((paid) => {
          paid.where('charge_id', charge.id).orWhere('write_off_charge_id', charge.id);
          if (charge.payment_plan_id) paid.orWhere('payment_plan_id', charge.payment_plan_id);
        });
      return (await query.orderBy('completed_at', 'desc').forUpdate().first(OFFER_COLUMNS)) as OfferRow | undefined;
    },

    async update(id: string, values: OfferValues, now: Date): Promise<OfferRow> {
      const [row] = await offers()
        .where({ id })
        .update({ ...values, updated_at: now })
        .returning(OFFER_COLUMNS.map((column) => column.replace(`${SETTLEMENT_OFFERS}.`, '')));
      return row as OfferRow;
    },
  };
}

/** The account's fact of an accepted offer (payment-terms.ts reads it): the cents forgiven, or null. */
export async function setSettlementDiscount(db: Knex, tenant: Tenant, accountId: string, discount: number | null): Promise<void> {
  await scoped(db, 'debt_accounts', tenant).where({ id: accountId }).update({ settlement_discount: discount, updated_at: db.fn.now() });
}
