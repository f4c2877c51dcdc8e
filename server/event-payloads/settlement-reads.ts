/** The settlement offers a batch of payloads shows, and each account's latest (settlement-payloads.ts shows them). */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';

export interface OfferRow {
  id: string;
  debt_account_id: string;
  name: string;
  status: string;
  amount: string;
  discount: string;
  discount_percentage: string;
  discounted_amount: string;
  months_period: number;
  allowed: string[];
  expires_at: Date | null;
  charge_id: string | null;
  payment_plan_id: string | null;
  payment_method_id: string | null;
  write_off_charge_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'id', 'debt_account_id', 'name', 'status', 'amount', 'discount', 'discount_percentage', 'discounted_amount', 'months_period', 'allowed', 'expires_at',
  'charge_id', 'payment_plan_id', 'payment_method_id', 'write_off_charge_id', 'created_at', 'updated_at',
];

/** The offers named by id. */
export async function loadOffers(db: Knex, tenant: Tenant, ids: string[]): Promise<OfferRow[]> {
  return ids.length > 0 ? scoped(db, 'settlement_offers', tenant).whereIn('id', ids).select(COLUMNS) : [];
}

/** The charge ids an offer's payload shows, to load with the other payments. */
export const offerChargeIds = (offers: OfferRow[]): string[] => offers.flatMap((offer) => offer.charge_id ?? []);


/**
 * In one query: per account of `accountIds`, its latest offer (the open one, if any), for the
 * accounts' payloads; and the offer each charge pays, by charge id: the offer whose charge it
 * is, whose plan it is an instalment of, or whose write-off it carries (the payment that
 * completed it).
 */
export async function loadOffersOf(
  db: Knex,
  tenant: Tenant,
  accountIds: string[],
  charges: { id: string; payment_plan_id: string | null }[],
): Promise<{ accountOffers: Map<string, OfferRow>; offersOfCharges: Map<string, OfferRow> }> {
  if (accountIds.length === 0 && charges.length === 0) return { accountOffers: new Map(), offersOfCharges: new Map() };
  const ids = charges.map((charge) => charge.id);
  const plans = [...new Set(charges.flatMap((charge) => charge.payment_plan_id ?? []))];
  const rows: OfferRow[] = await scoped(db, 'settlement_offers', tenant)
    .where((wanted) => {
      if (accountIds.length > 0) wanted.whereIn('debt_account_id', accountIds);
      if (ids.length > 0) wanted.orWhereIn('charge_id', ids).orWhereIn('write_off_charge_id', ids);
      if (plans.length > 0) wanted.orWhereIn('payment_plan_id', plans);
    })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(COLUMNS);
  const asked = new Set(accountIds);
  const paidBy = (charge: { id: string; payment_plan_id: string | null }) =>
    rows.find((offer) => offer.charge_id === charge.id || offer.write_off_charge_id === charge.id || (charge.payment_plan_id !== null && offer.payment_plan_id === charge.payment_plan_id));
  return {
    // Oldest first: keyed by account, the latest is the one kept.
    accountOffers: new Map(rows.filter((row) => asked.has(row.debt_account_id)).map((row) => [row.debt_account_id, row])),
    offersOfCharges: new Map(
      charges.flatMap((charge) => {
        const offer = paidBy(charge);
        return offer ? [[charge.id, offer] as const] : [];
      }),
    ),
  };
}
