import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../http/auth';
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
