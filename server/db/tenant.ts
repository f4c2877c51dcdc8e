/**
 * Tenancy, written once: every query of a tenant resource starts from `scoped`, which limits
 * it to the token's organization and environment. Another tenant's row is therefore simply
 * not found (404), exactly like a missing one.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function scoped(db: Knex, table: string, tenant: Tenant): Knex.QueryBuilder {
  return db(table)
    .where(`${table}.organization_id`, tenant.organizationId)
    .andWhere(`${table}.environment`, tenant.environment);
}

/** The columns that tie a new row to its tenant. */
export function tenantColumns(tenant: Tenant): { organization_id: string; environment: string } {
  return { organization_id: tenant.organizationId, environment: tenant.environment };
}

/**
 * `{id|external_id}`: a UUID is tried as `id` first, then as `external_id`; any other value
 * only as `external_id`. One query either way.
 */
export function whereIdOrExternalId(query: Knex.QueryBuilder, table: string, key: string): Knex.QueryBuilder {
  if (!UUID.test(key)) return query.where(`${table}.external_id`, key);
  return query
    .where((q) => q.where(`${table}.id`, key).orWhere(`${table}.external_id`, key))
    .orderByRaw(`(${table}.id = ?) DESC`, [key]);
}

/** PostgreSQL's unique_violation, raised when two writers race for one external_id. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError?.code === '23505' && (constraint === undefined || pgError.constraint === constraint);
}

/**
 * A deleted row is still referenced: foreign_key_violation (23503, NO ACTION keys) or
 * restrict_violation (23001), which is what our ON DELETE RESTRICT keys actually raise.
 */
export function isForeignKeyViolation(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === '23503' || code === '23001';
}

export const TAKEN = 'has already been taken';

/** Whether `query` (a tenant's rows of one table) holds `externalId`, other than the row `exceptId`. */
export async function externalIdTaken(query: Knex.QueryBuilder, externalId: string, exceptId?: string): Promise<boolean> {
  query.where('external_id', externalId);
  if (exceptId) query.whereNot('id', exceptId);
  return (await query.first('id')) !== undefined;
}

/** The name knex gives the (organization_id, environment, external_id) unique index of a table. */
export const externalIdIndex = (table: string) => `${table}_organization_id_environment_external_id_unique`;

/**
 * Two writers racing for one external_id of `table`: the unique index decides, and the loser
 * gets the same 422 on external_id as a request that found it taken beforehand.
 */
export async function externalIdUnique<T>(table: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error, externalIdIndex(table))) throw ApiError.field('external_id', TAKEN);
    throw error;
  }
}
