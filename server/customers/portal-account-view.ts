/**
 * The customer's `portal_account` as the API shows it: read from the Portal accounts' table
 * (migration 021), which the Portal's sign-in folder writes; the customers' read model reads it
 * by its columns, without importing that folder (it sits above this one).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped } from '../db/tenant';

type View = components['schemas']['CustomerPortalAccount'];

export async function portalAccountsOf(db: Knex, tenant: Tenant, customerIds: string[]): Promise<Map<string, View>> {
  if (customerIds.length === 0) return new Map();
  const rows: { customer_id: string; email: string; confirmed_at: Date | null; last_sign_in_at: Date | null }[] = await scoped(db, 'portal_accounts', tenant)
    .whereIn('customer_id', customerIds)
    .select('customer_id', 'email', 'confirmed_at', 'last_sign_in_at');
  return new Map(
    rows.map((row) => [row.customer_id, { email: row.email, confirmed_at: row.confirmed_at?.toISOString() ?? null, last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null }]),
  );
}
