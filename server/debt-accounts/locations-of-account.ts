/**
 * The locations a debt account request names: `location_id` (an existing location by id or
 * external_id, or a new one created with that external_id from location_name and
 * location_type), and `locations[]` (reused by external_id, or created).
 */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
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
  // Another request may be making it right now: insert-or-get, never a duplicate key.
  const made = await locations.insertOrGet({ external_id: locationId, name, type: type ?? 'original_creditor' });
  if (made.created) created(made.row);
  return made.row;
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
    const values = { name: item.name, type: item.type ?? 'original_creditor' } as const;
    const made = item.external_id ? await locations.insertOrGet({ ...values, external_id: item.external_id }) : { row: await locations.insert({ ...values, external_id: null }), created: true };
    if (made.created) created(made.row);
    const location = made.row;
    if (location.id !== primaryId && !ids.includes(location.id)) ids.push(location.id);
  }
  return ids;
}
