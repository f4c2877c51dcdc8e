/**
 * What a notice says about the debt, read from the accounts it covers: each account's
 * itemization (which must come to its current balance), its number, the creditor on the
 * itemization date and now (the account's locations by type), and its product.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { debtAccountRepo, type DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { itemizedTotal } from '../debt-accounts/itemization';
import { locationRepo, type LocationRow, type LocationType } from '../locations/location-repo';
import type { NoticeAccount } from './notice-data';

/** The number the consumer knows the account by. */
export const referenceOf = (row: Pick<DebtAccountRow, 'id' | 'external_account_number' | 'external_id'>): string =>
  row.external_account_number || row.external_id || row.id.slice(0, 8);

export interface NoticeFacts {
  accounts: NoticeAccount[];
  current_creditor: string;
}

/**
 * The facts of the notice of `account` covering `covered` (its children, or itself). A 422 on
 * `itemization` names every account without one, or whose itemization does not come to its
 * current balance.
 */
export async function noticeFacts(db: Knex, tenant: Tenant, account: DebtAccountRow, covered: DebtAccountRow[]): Promise<NoticeFacts> {
  const problems: string[] = [];
  for (const row of covered) {
    const label = referenceOf(row);
    if (!row.itemization) problems.push(`${label} has none: set the account's itemization first (12 CFR 1006.34(c)(2)(vi))`);
    else if (itemizedTotal(row.itemization) !== Number(row.current_balance)) {
      const { amount, interest, fees, payments_and_credits: paid } = row.itemization;
      problems.push(`of ${label}: ${amount} + ${interest} + ${fees} - ${paid} = ${itemizedTotal(row.itemization)} is not its current_balance ${row.current_balance}; update the itemization`);
    }
  }
  if (problems.length > 0) throw ApiError.invalid({ itemization: problems });

  const everyone = [account, ...covered.filter((row) => row.id !== account.id)];
  const links = await debtAccountRepo(db, tenant).additionalLocations(everyone.map((row) => row.id));
  const locations = new Map(
    (await locationRepo(db, tenant).findMany([...new Set([...everyone.map((row) => row.location_id), ...links.map((link) => link.location_id)])])).map((row) => [row.id, row]),
  );
  /** The account's locations, its own first. */
  const locationsOf = (row: DebtAccountRow): LocationRow[] =>
    [row.location_id, ...links.filter((link) => link.debt_account_id === row.id).map((link) => link.location_id)].map((id) => locations.get(id)).filter((l): l is LocationRow => !!l);
  const named = (row: DebtAccountRow, type: LocationType): string | undefined => locationsOf(row).find((location) => location.type === type)?.name;
  const creditor = (row: DebtAccountRow, type: LocationType): string =>
    named(row, type) ?? named(account, type) ?? named(row, 'original_creditor') ?? named(account, 'original_creditor') ?? locations.get(row.location_id)!.name;

  return {
    current_creditor: creditor(account, 'current_creditor'),
    accounts: covered.map((row) => ({
      id: row.id,
      reference: referenceOf(row),
      creditor_then: creditor(row, row.itemization!.creditor),
      product: named(row, 'product_type') ?? named(account, 'product_type') ?? null,
      itemization: row.itemization!,
    })),
  };
}
