/** Browser sessions: the SQL. A cookie finds its row by the SHA-256 of its value. */
import type { Knex } from 'knex';
import type { Environment, Tenant } from '../kernel/tenant';

export const BROWSER_SESSIONS = 'portal_browser_sessions';

const COLUMNS = [
  'id',
  'organization_id',
  'environment',
  'customer_session_id',
  'customer_id',
  'debt_account_id',
  'csrf_token',
  'verified_at',
  'plan_offer_closed',
  'expires_at',
  'portal_account_id',
  'created_at',
];

export interface BrowserSessionRow {
  id: string;
  organization_id: string;
  environment: Environment;
  customer_session_id: string | null;
  customer_id: string | null;
  debt_account_id: string | null;
  csrf_token: string;
  verified_at: Date | null;
  plan_offer_closed: boolean;
  expires_at: Date | null;
  /** Signed in with a Portal account (server/portal-logins/); null otherwise. */
  portal_account_id: string | null;
  created_at: Date;
}

export type BrowserSessionValues = Partial<Omit<BrowserSessionRow, 'id' | 'organization_id' | 'environment' | 'created_at'>>;

export function browserSessionRepo(db: Knex) {
  return {
    async insert(tenant: Tenant, tokenHash: string, values: BrowserSessionValues & { csrf_token: string }): Promise<BrowserSessionRow> {
      const [row] = await db(BROWSER_SESSIONS)
        .insert({ ...values, token_hash: tokenHash, organization_id: tenant.organizationId, environment: tenant.environment })
        .returning(COLUMNS);
      return row as BrowserSessionRow;
    },

    async findByTokenHash(tokenHash: string): Promise<BrowserSessionRow | undefined> {
      return db(BROWSER_SESSIONS).where({ token_hash: tokenHash }).first(COLUMNS);
    },

    async update(id: string, values: BrowserSessionValues): Promise<void> {
      await db(BROWSER_SESSIONS).where({ id }).update(values);
    },

    async delete(id: string): Promise<void> {
      await db(BROWSER_SESSIONS).where({ id }).delete();
    },

    async deleteOfPortalAccount(portalAccountId: string): Promise<void> {
      await db(BROWSER_SESSIONS).where({ portal_account_id: portalAccountId }).delete();
    },
  };
}

export function tenantOfBrowser(row: BrowserSessionRow): Tenant {
  return { organizationId: row.organization_id, environment: row.environment, tokenHash: '' };
}
