/**
 * The locations a debt account request names: `location_id` (an existing location by id or
 * external_id, or a new one created with that external_id from location_name and
 * location_type), and `locations[]` (reused by external_id, or created).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../http/auth';
import { ApiError } from '../http/errors';
import { locationRepo, type LocationRow } from '../locations/location-repo';

type Schemas = components['schemas'];

export async function resolveLocation(
  db: Knex,
  tenant: Tenant,
  locationId: string,
  name: string | undefined,
  type: Schemas['LocationType'] | undefined,
  created: (row: LocationRow) => void = () => {},
): Promise<LocationRow> {
  const locations = locationRepo(db, tenant);
  const existing = await locations.find(locationId);
  if (existing) return existing;
  if (!name) throw ApiError.field('location_name', 'is required when location_id matches no location');
  const row = await locations.insert({ external_id: locationId, name, type: type ?? 'original_creditor' });
  created(row);
  return row;
}

/** The ids of the additional locations, in the order given, without the primary one or repeats. */
export async function resolveAdditionalLocations(
  db: Knex,
  tenant: Tenant,
  items: Schemas['LocationInput'][],
  primaryId: string,
  created: (row: LocationRow) => void = () => {},
): Promise<string[]> {
  const locations = locationRepo(db, tenant);
  const ids: string[] = [];
  for (const item of items) {
    const existing = item.external_id ? await locations.find(item.external_id) : undefined;
    let location = existing && existing.external_id === item.external_id ? existing : undefined;
    if (!location) {
      location = await locations.insert({ external_id: item.external_id ?? null, name: item.name, type: item.type ?? 'original_creditor' });
      created(location);
    }
    if (location.id !== primaryId && !ids.includes(location.id)) ids.push(location.id);
  }
  return ids;
}
