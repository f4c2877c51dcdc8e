import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Environment, Tenant } from '../kernel/tenant';
import { isUniqueViolation, tenantColumns } from '../db/tenant';
import type { SessionTag } from './customer-session-links';

export const CUSTOMER_SESSIONS = 'customer_sessions';
export const SHORT_CODE_UNIQUE = 'customer_sessions_short_code_unique';
/** A fresh code colliding five times in a row means something is broken, not unlucky. */
const SHORT_CODE_ATTEMPTS = 5;

export const CUSTOMER_SESSION_COLUMNS = [
  'id',
  'organization_id',
  'environment',
  'customer_id',
  'debt_account_id',
  'debt_account_dispute_id',
  'destination',
  'tags',
  'return_url',
  'expiration_return_url',
  'verification',
  'token_sealed',
  'short_code',
  'valid_until_hours',
  'is_valid_forever',
  'expires_at',
  'last_used_at',
  'created_at',
].map((column) => `${CUSTOMER_SESSIONS}.${column}`);

export interface CustomerSessionRow {
  id: string;
  organization_id: string;
  environment: Environment;
  customer_id: string;
  debt_account_id: string | null;
  debt_account_dispute_id: string | null;
  destination: components['schemas']['SessionDestination'];
  tags: SessionTag[];
  return_url: string | null;
  expiration_return_url: string | null;
  verification: boolean;
  token_sealed: string;
  short_code: string | null;
  valid_until_hours: number | null;
  is_valid_forever: boolean;
  expires_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

export type CustomerSessionValues = Omit<CustomerSessionRow, 'id' | 'organization_id' | 'environment' | 'short_code' | 'last_used_at'> & {
  token_hash: string;
};

/** Sessions of one tenant: what the API creates. */
export function customerSessionRepo(db: Knex, tenant: Tenant) {
  return {
    /**
     * Inserts a session, with a short code from `newCode` when given. A code already taken
     * (unique index) is retried with a new one; each attempt runs in a savepoint, so that a
     * collision does not abort the caller's transaction.
     */
    async insert(values: CustomerSessionValues, newCode?: () => string): Promise<CustomerSessionRow> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.transaction(async (savepoint) => {
            const [row] = await savepoint(CUSTOMER_SESSIONS)
              .insert({ ...values, tags: JSON.stringify(values.tags), short_code: newCode ? newCode() : null, ...tenantColumns(tenant) })
              .returning(CUSTOMER_SESSION_COLUMNS);
            return row as CustomerSessionRow;
          });
        } catch (error) {
          if (!isUniqueViolation(error, SHORT_CODE_UNIQUE) || attempt >= SHORT_CODE_ATTEMPTS) throw error;
        }
      }
    },
  };
}

/**
 * Sessions as a link finds them: by the token's hash or by the short code, both unique
 * across tenants. The row names its tenant; everything read for it afterwards is scoped by it.
 */
export function customerSessionLinkRepo(db: Knex) {
  return {
    async findByTokenHash(tokenHash: string): Promise<CustomerSessionRow | undefined> {
      return db(CUSTOMER_SESSIONS).where({ token_hash: tokenHash }).first(CUSTOMER_SESSION_COLUMNS);
    },

    async findById(id: string): Promise<CustomerSessionRow | undefined> {
      return db(CUSTOMER_SESSIONS).where({ id }).first(CUSTOMER_SESSION_COLUMNS);
    },

    async findByShortCode(code: string): Promise<CustomerSessionRow | undefined> {
      return db(CUSTOMER_SESSIONS).where({ short_code: code }).first(CUSTOMER_SESSION_COLUMNS);
    },

    /**
     * Records a use at `now` and sets the new expiry, unless the session has expired in the
     * meantime (then nothing changes and the answer is undefined): a late use never revives it.
     */
    async recordUse(id: string, now: Date, expiresAt: Date | null): Promise<CustomerSessionRow | undefined> {
      const [row] = await db(CUSTOMER_SESSIONS)
        .where({ id })
        .andWhere((query) => query.whereNull('expires_at').orWhere('expires_at', '>', now))
        .update({ last_used_at: now, expires_at: expiresAt })
        .returning(CUSTOMER_SESSION_COLUMNS);
      return row as CustomerSessionRow | undefined;
    },
  };
}

export function tenantOfCustomerSession(row: CustomerSessionRow): Tenant {
  // Not a token's request: there is no token to count against.
  return { organizationId: row.organization_id, environment: row.environment, tokenHash: '' };
}
