import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, whereIdOrExternalId, externalIdTaken } from '../db/tenant';

export const LOCATIONS = 'locations';
export const DEBT_ACCOUNT_LOCATIONS = 'debt_account_locations';
export const LOCATION_COLUMNS = ['id', 'external_id', 'name', 'type', 'card', 'ach', 'rules', 'metadata', 'created_at', 'updated_at'].map(
  (column) => `${LOCATIONS}.${column}`,
);

export type LocationType = components['schemas']['LocationType'];

export interface LocationRow {
  id: string;
  external_id: string | null;
  name: string;
  type: LocationType;
  card: boolean;
  ach: boolean;
  rules: Record<string, unknown>;
  metadata: Record<string, string>;
  created_at: Date;
  updated_at: Date;
}

export type LocationValues = Partial<Pick<LocationRow, 'external_id' | 'name' | 'type' | 'card' | 'ach' | 'metadata'>>;

/**
 * Locations a bulk import makes, each with the id it was planned under: those whose external_id
 * another request made meanwhile are not made again. Answers the id each planned id stands for.
 */
export async function insertOrGetLocations(db: Knex, tenant: Tenant, rows: { id: string; external_id: string | null; name: string }[]): Promise<{ idOf: Map<string, string>; created: string[] }> {
  const idOf = new Map(rows.map((row) => [row.id, row.id]));
  if (rows.length === 0) return { idOf, created: [] };
  // '' for no external_id: knex binds no nulls inside arrays.
  const { rows: made } = await db.raw<{ rows: { id: string }[] }>(
    `INSERT INTO ${LOCATIONS} (id, organization_id, environment, external_id, name, type)
     SELECT id, ?, ?, NULLIF(external_id, ''), name, 'original_creditor' FROM unnest(?::uuid[], ?::text[], ?::text[]) AS l(id, external_id, name)
     ON CONFLICT (organization_id, environment, external_id) DO NOTHING
     RETURNING id`,
    [tenant.organizationId, tenant.environment, rows.map((row) => row.id), rows.map((row) => row.external_id ?? ''), rows.map((row) => row.name)],
  );
  const created = new Set(made.map((row) => row.id));
  const lost = rows.filter((row) => !created.has(row.id));
  if (lost.length > 0) {
    const found = await scoped(db, LOCATIONS, tenant).whereIn('external_id', lost.map((row) => row.external_id!)).select<{ id: string; external_id: string }[]>('id', 'external_id');
    const byKey = new Map(found.map((row) => [row.external_id, row.id]));
    for (const row of lost) idOf.set(row.id, byKey.get(row.external_id!)!);
  }
  return { idOf, created: [...created] };
}

export function locationRepo(db: Knex, tenant: Tenant) {
  const locations = () => scoped(db, LOCATIONS, tenant);
  return {
    query: locations,

    /** By id or external_id; `forUpdate` locks the row for the rest of the transaction. */
    async find(key: string, { forUpdate = false } = {}): Promise<LocationRow | undefined> {
      const query = whereIdOrExternalId(locations(), LOCATIONS, key).first(LOCATION_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<LocationRow | undefined>;
    },

    externalIdTaken: (externalId: string, exceptId?: string) => externalIdTaken(locations(), externalId, exceptId),

    async findMany(ids: string[]): Promise<LocationRow[]> {
      if (ids.length === 0) return [];
      return locations().whereIn('id', ids).select(LOCATION_COLUMNS);
    },

    async insert(values: LocationValues & { name: string }): Promise<LocationRow> {
      const [row] = await db(LOCATIONS)
        .insert({ ...values, metadata: JSON.stringify(values.metadata ?? {}), ...tenantColumns(tenant) })
        .returning(LOCATION_COLUMNS);
      return row as LocationRow;
    },

    /**
     * The location with this external_id, made from `values` when there is none: the insert
     * and the unique key decide in one statement (ON CONFLICT DO NOTHING), so that any number
     * of requests naming one new location, in any process, get the one row and no error; the
     * select after it is a statement of its own, so it sees the row another transaction just
     * committed. `created` is true for the one call that made it.
     */
    async insertOrGet(values: LocationValues & { external_id: string; name: string }): Promise<{ row: LocationRow; created: boolean }> {
      for (;;) {
        const [row] = await db(LOCATIONS)
          .insert({ ...values, metadata: JSON.stringify(values.metadata ?? {}), ...tenantColumns(tenant) })
          .onConflict(['organization_id', 'environment', 'external_id'])
          .ignore()
          .returning(LOCATION_COLUMNS);
        if (row) return { row: row as LocationRow, created: true };
        const existing = await locations().where('external_id', values.external_id).first(LOCATION_COLUMNS);
        // Deleted again in between: try once more.
        if (existing) return { row: existing as LocationRow, created: false };
      }
    },

    async update(id: string, values: LocationValues): Promise<LocationRow> {
      const changes = { ...values, updated_at: db.fn.now() } as Record<string, unknown>;
      if (values.metadata) changes.metadata = JSON.stringify(values.metadata);
      const [row] = await locations().where('id', id).update(changes).returning(LOCATION_COLUMNS);
      return row as LocationRow;
    },

    async delete(id: string): Promise<void> {
      await locations().where('id', id).delete();
    },

    /**
     * Accounts using each location, as their location or as an additional one: the counter
     * the triggers of migration 008 keep, one row per location whatever its number of accounts.
     */
    async accountCounts(ids: string[]): Promise<Map<string, number>> {
      if (ids.length === 0) return new Map();
      const { rows } = await db.raw<{ rows: { location_id: string; count: number }[] }>(
        `SELECT id AS location_id, debt_accounts_count AS count FROM ${LOCATIONS} WHERE id = ANY(?) AND organization_id = ? AND environment = ?`,
        [ids, tenant.organizationId, tenant.environment],
      );
      return new Map(rows.map((row) => [row.location_id, Number(row.count)]));
    },
  };
}
