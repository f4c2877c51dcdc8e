import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';

export const ORGANIZATION_SETTINGS = 'organization_settings';

export interface StoredSettings {
  /** Only the keys set; the others read as their defaults. */
  settings: Record<string, unknown>;
  notification_email: string | null;
  organization_name: string;
}

export function settingsRepo(db: Knex, tenant: Tenant) {
  return {
    async read(): Promise<StoredSettings> {
      const row = await db('organizations AS o')
        .leftJoin(`${ORGANIZATION_SETTINGS} AS s`, (join) => join.on('s.organization_id', 'o.id').andOnVal('s.environment', tenant.environment))
        .where('o.id', tenant.organizationId)
        .first('o.name AS organization_name', 'o.notification_email', 's.settings');
      return { settings: row?.settings ?? {}, notification_email: row?.notification_email ?? null, organization_name: row?.organization_name ?? '' };
    },

    /** Sets the given keys, keeping the others (one statement, so two writers of different keys both win). */
    async merge(values: Record<string, unknown>): Promise<void> {
      await db.raw(
        `INSERT INTO ${ORGANIZATION_SETTINGS} (organization_id, environment, settings) VALUES (?, ?, ?::jsonb)
         ON CONFLICT (organization_id, environment) DO UPDATE SET settings = ${ORGANIZATION_SETTINGS}.settings || EXCLUDED.settings, updated_at = now()`,
        [tenant.organizationId, tenant.environment, JSON.stringify(values)],
      );
    },
  };
}
