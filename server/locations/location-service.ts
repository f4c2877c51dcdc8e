/**
 * The rules of the location operations that the document states but a schema cannot check:
 * external_id unique per tenant, metadata update semantics, and no deletion while a debt
 * account still uses the location.
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { externalIdUnique, isForeignKeyViolation, TAKEN } from '../db/tenant';
import { mergeMetadata } from '../kernel/metadata';
import type { AppDeps } from '../deps';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { locationToApi } from './location-mapper';
import { LOCATION_COLUMNS, locationRepo, type LocationRow, type LocationValues, LOCATIONS } from './location-repo';

type Schemas = components['schemas'];
type Location = Schemas['Location'];


export type LocationDeps = Pick<AppDeps, 'db' | 'events'>;

/** Locations as API objects, with their account counts loaded in one query. */
async function loadLocations(db: Knex, tenant: Tenant, rows: LocationRow[]): Promise<Location[]> {
  const counts = await locationRepo(db, tenant).accountCounts(rows.map((row) => row.id));
  return rows.map((row) => locationToApi(row, counts.get(row.id) ?? 0));
}


function inUse(count: number): ApiError {
  const accounts = count === 1 ? '1 debt account' : `${count} debt accounts`;
  return ApiError.conflict(`The location is used by ${accounts}; detach or move those accounts first.`);
}

async function list({ db }: LocationDeps, tenant: Tenant, page: PageRequest): Promise<Listed<Location>> {
  return listPage<LocationRow, Location>(locationRepo(db, tenant).query(), page, { columns: LOCATION_COLUMNS, table: LOCATIONS }, (rows) =>
    loadLocations(db, tenant, rows),
  );
}

async function find({ db }: LocationDeps, tenant: Tenant, key: string): Promise<Location> {
  const row = await locationRepo(db, tenant).find(key);
  if (!row) throw ApiError.notFound('Location');
  return (await loadLocations(db, tenant, [row]))[0]!;
}

async function create({ db, events }: LocationDeps, tenant: Tenant, body: Schemas['LocationCreate']): Promise<Location> {
  return externalIdUnique(LOCATIONS, () =>
    db.transaction(async (trx) => {
      const locations = locationRepo(trx, tenant);
      if (body.external_id && (await locations.externalIdTaken(body.external_id))) throw ApiError.field('external_id', TAKEN);
      const row = await locations.insert({
        name: body.name,
        external_id: body.external_id ?? null,
        type: body.type ?? 'original_creditor',
        card: body.card ?? true,
        ach: body.ach ?? true,
        metadata: body.metadata ?? {},
      });
      await events.record(trx, tenant, [{ name: 'location.create', ids: [row.id] }]);
      // A new location has no accounts yet.
      return locationToApi(row, 0);
    }),
  );
}

async function update({ db, events }: LocationDeps, tenant: Tenant, key: string, body: Schemas['LocationUpdate']): Promise<Location> {
  return externalIdUnique(LOCATIONS, () =>
    db.transaction(async (trx) => {
      const locations = locationRepo(trx, tenant);
      const row = await locations.find(key, { forUpdate: true });
      if (!row) throw ApiError.notFound('Location');
      if (body.external_id && (await locations.externalIdTaken(body.external_id, row.id))) {
        throw ApiError.field('external_id', TAKEN);
      }
      const changes: LocationValues = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.external_id !== undefined) changes.external_id = body.external_id;
      if (body.type !== undefined) changes.type = body.type;
      if (body.card !== undefined) changes.card = body.card;
      if (body.ach !== undefined) changes.ach = body.ach;
      if (body.metadata !== undefined) changes.metadata = mergeMetadata(row.metadata, body.metadata);
      const updated = await locations.update(row.id, changes);
      await events.record(trx, tenant, [{ name: 'location.update', ids: [updated.id] }]);
      return (await loadLocations(trx, tenant, [updated]))[0]!;
    }),
  );
}

/**
 * The row lock makes an account being tied to the location right now either commit first
 * (and be counted) or wait for the deletion; the foreign key (ON DELETE RESTRICT) is the
 * last word, and its violation is the same 409.
 */
async function remove({ db, events }: LocationDeps, tenant: Tenant, key: string): Promise<void> {
  try {
    await db.transaction(async (trx) => {
      const locations = locationRepo(trx, tenant);
      const row = await locations.find(key, { forUpdate: true });
      if (!row) throw ApiError.notFound('Location');
      const count = (await locations.accountCounts([row.id])).get(row.id) ?? 0;
      if (count > 0) throw inUse(count);
      // Recorded first: the payload shows the location as it was just before deletion.
      await events.record(trx, tenant, [{ name: 'location.delete', ids: [row.id] }]);
      await locations.delete(row.id);
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw ApiError.conflict('The location is used by a debt account; detach or move those accounts first.');
    throw error;
  }
}

export function locationService(deps: LocationDeps) {
  return {
    list: (tenant: Tenant, page: PageRequest) => list(deps, tenant, page),
    find: (tenant: Tenant, key: string) => find(deps, tenant, key),
    create: (tenant: Tenant, body: Schemas['LocationCreate']) => create(deps, tenant, body),
    update: (tenant: Tenant, key: string, body: Schemas['LocationUpdate']) => update(deps, tenant, key, body),
    remove: (tenant: Tenant, key: string) => remove(deps, tenant, key),
  };
}
