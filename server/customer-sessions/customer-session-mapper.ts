/** The one place where session rows become API objects. */
import type { components } from '../../generated/schema';
import type { components as PortalComponents } from '../../generated/portal';
import type { Config } from '../kernel/config';
import type { CustomerRow } from '../customer-store/customer-repo';
import type { DebtAccountRow } from '../debt-accounts/debt-account-repo';
import { portalUrl, shortUrl } from './customer-session-links';
import type { CustomerSessionRow } from './customer-session-repo';

type Schemas = components['schemas'];
type Links = Pick<Config, 'portalUrl' | 'shortLinkBaseUrl'>;

/** The link of a session; `token` is the clear one, just made or unsealed. */
export function portalUrlOf(row: CustomerSessionRow, token: string, config: Links): string {
  return portalUrl(config.portalUrl, token, row, row.organization_id, row.tags);
}

export function customerSessionToApi(row: CustomerSessionRow, token: string, config: Links): Schemas['CustomerSession'] {
  return {
    id: row.id,
    portal_url: portalUrlOf(row, token, config),
    return_url: row.return_url,
    expiration_return_url: row.expiration_return_url,
    short_url: row.short_code === null ? null : shortUrl(config.shortLinkBaseUrl, row.short_code),
    valid_till: row.expires_at ? row.expires_at.toISOString() : null,
  };
}

/** The ids of the request item, echoed as supplied. */
export interface SuppliedIds {
  customer_id: string;
  debt_account_id?: string;
  debt_account_dispute_id?: string;
}

export function bulkCustomerSessionToApi(row: CustomerSessionRow, token: string, config: Links, ids: SuppliedIds): Schemas['BulkCustomerSession'] {
  return {
    ...customerSessionToApi(row, token, config),
    customer_id: ids.customer_id,
    debt_account_id: ids.debt_account_id ?? null,
    debt_account_dispute_id: ids.debt_account_dispute_id ?? null,
  };
}

/** What the Portal entry answers; names and amounts stay withheld until verification. */
export function portalSessionToApi(row: CustomerSessionRow, customer: CustomerRow, account: DebtAccountRow | undefined): PortalComponents['schemas']['PortalSession'] {
  const withhold = row.verification;
  return {
    session_id: row.id,
    signed_in_with: 'link',
    destination: row.destination,
    verification_required: row.verification,
    customer: { id: customer.id, external_id: customer.external_id, name: withhold ? null : customer.name },
    debt_account: account
      ? {
          id: account.id,
          external_id: account.external_id,
          status: account.status,
          balance: withhold ? null : Number(account.balance),
          current_balance: withhold ? null : Number(account.current_balance),
        }
      : null,
    debt_account_dispute_id: row.debt_account_dispute_id,
    return_url: row.return_url,
    expiration_return_url: row.expiration_return_url,
    valid_till: row.expires_at ? row.expires_at.toISOString() : null,
  };
}

/** A browser signed in with a Portal account has no customer session: its customer, verified, and when its quiet visit ends. */
export function portalAccountSessionToApi(customer: CustomerRow, visitEnds: Date | null): PortalComponents['schemas']['PortalSession'] {
  return {
    session_id: null,
    signed_in_with: 'portal_account',
    destination: 'accounts_list',
    verification_required: false,
    customer: { id: customer.id, external_id: customer.external_id, name: customer.name },
    debt_account: null,
    debt_account_dispute_id: null,
    return_url: null,
    expiration_return_url: null,
    valid_till: visitEnds ? visitEnds.toISOString() : null,
  };
}
