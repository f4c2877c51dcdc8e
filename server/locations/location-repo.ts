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
     * Accounts using each location, as their location or as an additional one. The ids come
     * from scoped rows already; the tenant condition keeps the query safe on its own.
     */
    /**
     * Accounts using each location. An account's own location is never also one of its
     * additional locations (the debt-account service keeps them apart), so the two counts add
     * up without a DISTINCT over every account of the location.
     */
    async accountCounts(ids: string[]): Promise<Map<string, number>> {
      if (ids.length === 0) return new Map();
      const { organizationId, environment } = tenant;
      const { rows } = await db.raw<{ rows: { location_id: string; count: string }[] }>(
        `SELECT location_id, sum(n) AS count FROM (
           SELECT location_id, count(*) AS n FROM debt_accounts
            WHERE location_id = ANY(?) AND organization_id = ? AND environment = ? GROUP BY location_id
           UNION ALL
           SELECT location_id, count(*) FROM ${DEBT_ACCOUNT_LOCATIONS}
            WHERE location_id = ANY(?) AND organization_id = ? AND environment = ? GROUP BY location_id
         ) uses GROUP BY location_id`,
        [ids, organizationId, environment, ids, organizationId, environment],
      );
      return new Map(rows.map((row) => [row.location_id, Number(row.count)]));
    },
  };
}
