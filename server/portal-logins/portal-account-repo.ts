/** Portal accounts and their one-use links: the SQL. Every query is scoped to the tenant. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';

export const PORTAL_ACCOUNTS = 'portal_accounts';
export const PORTAL_ACCOUNT_TOKENS = 'portal_account_tokens';
export const EMAIL_TAKEN = 'portal_accounts_email_unique';
export const CUSTOMER_HAS_ONE = 'portal_accounts_customer_unique';

const COLUMNS = ['id', 'organization_id', 'environment', 'customer_id', 'email', 'password_hash', 'confirmed_at', 'last_sign_in_at', 'created_at', 'updated_at'].map(
  (column) => `${PORTAL_ACCOUNTS}.${column}`,
);

export interface PortalAccountRow {
  id: string;
  organization_id: string;
  environment: 'production' | 'sandbox';
  customer_id: string;
  email: string;
  password_hash: string;
  confirmed_at: Date | null;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type TokenPurpose = 'confirm' | 'reset';

export interface AccountTokenRow {
  id: string;
  portal_account_id: string;
  purpose: TokenPurpose;
  expires_at: Date;
  used_at: Date | null;
}

export function portalAccountRepo(db: Knex, tenant: Tenant) {
  const accounts = () => scoped(db, PORTAL_ACCOUNTS, tenant);
  return {
    async insert(values: { customer_id: string; email: string; password_hash: string; created_at: Date }): Promise<PortalAccountRow> {
      const [row] = await db(PORTAL_ACCOUNTS)
        .insert({ ...values, updated_at: values.created_at, ...tenantColumns(tenant) })
        .returning(COLUMNS);
      return row as PortalAccountRow;
    },

    async find(id: string): Promise<PortalAccountRow | undefined> {
      return accounts().where(`${PORTAL_ACCOUNTS}.id`, id).first(COLUMNS);
    },

    async findByEmail(email: string): Promise<PortalAccountRow | undefined> {
      return accounts().where(`${PORTAL_ACCOUNTS}.email`, email).first(COLUMNS);
    },

    async findByCustomer(customerId: string): Promise<PortalAccountRow | undefined> {
      return accounts().where(`${PORTAL_ACCOUNTS}.customer_id`, customerId).first(COLUMNS);
    },

    async update(id: string, values: Partial<Pick<PortalAccountRow, 'password_hash' | 'confirmed_at' | 'last_sign_in_at' | 'updated_at'>>): Promise<void> {
      await accounts().where(`${PORTAL_ACCOUNTS}.id`, id).update(values);
    },

    async deleteOfCustomer(customerId: string): Promise<boolean> {
      return (await accounts().where(`${PORTAL_ACCOUNTS}.customer_id`, customerId).delete()) > 0;
    },
  };
}

/** The links: a row per link sent, found by the SHA-256 of its token. */
export function accountTokenRepo(db: Knex) {
  return {
    async insert(values: { portal_account_id: string; purpose: TokenPurpose; token_hash: string; expires_at: Date; created_at: Date }): Promise<void> {
      await db(PORTAL_ACCOUNT_TOKENS).insert(values);
    },

    /** Locks the row: two clicks of one link at once use it once. */
    async findForUpdate(tokenHash: string): Promise<AccountTokenRow | undefined> {
      return db(PORTAL_ACCOUNT_TOKENS).where({ token_hash: tokenHash }).forUpdate().first('id', 'portal_account_id', 'purpose', 'expires_at', 'used_at');
    },

    async find(tokenHash: string): Promise<AccountTokenRow | undefined> {
      return db(PORTAL_ACCOUNT_TOKENS).where({ token_hash: tokenHash }).first('id', 'portal_account_id', 'purpose', 'expires_at', 'used_at');
    },

    /** The link's tenant, read before its tenant is known (a link names nothing else). */
    async tenantOf(tokenHash: string): Promise<Tenant | undefined> {
      const row = await db(PORTAL_ACCOUNT_TOKENS)
        .join(PORTAL_ACCOUNTS, `${PORTAL_ACCOUNTS}.id`, `${PORTAL_ACCOUNT_TOKENS}.portal_account_id`)
        .where(`${PORTAL_ACCOUNT_TOKENS}.token_hash`, tokenHash)
        .first(`${PORTAL_ACCOUNTS}.organization_id`, `${PORTAL_ACCOUNTS}.environment`);
      return row ? { organizationId: row.organization_id, environment: row.environment, tokenHash: '' } : undefined;
    },

    async use(id: string, at: Date): Promise<void> {
      await db(PORTAL_ACCOUNT_TOKENS).where({ id }).update({ used_at: at });
    },

    /** A new link of a purpose makes the earlier unused ones worthless. */
    async retire(portalAccountId: string, purpose: TokenPurpose, at: Date): Promise<void> {
      await db(PORTAL_ACCOUNT_TOKENS).where({ portal_account_id: portalAccountId, purpose }).whereNull('used_at').update({ used_at: at });
    },
  };
}
