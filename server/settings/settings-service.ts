/**
 * Reading and changing the organization settings of a tenant: every key answered, set or
 * default; a change writes only the keys sent, after every key's rule passed.
 */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { ApiError, type FieldErrors } from '../kernel/errors';
import { SETTING_KEYS, type Settings, type SettingsUpdate } from './settings-keys';
import { settingsRepo, type StoredSettings } from './settings-repo';

const KEYS = Object.keys(SETTING_KEYS) as (keyof Settings)[];

function resolved(stored: StoredSettings): Settings {
  const settings = {} as Record<string, unknown>;
  for (const key of KEYS) settings[key] = key in stored.settings ? stored.settings[key] : SETTING_KEYS[key].default(stored);
  return settings as Settings;
}

/** A tenant's settings, each key set or default, with the organization's name and notification e-mail (for what its e-mails say, and where replies go). */
export async function readSettings(db: Knex, tenant: Tenant): Promise<Settings & { organization_name: string; notification_email: string | null }> {
  const stored = await settingsRepo(db, tenant).read();
  return { ...resolved(stored), organization_name: stored.organization_name, notification_email: stored.notification_email };
}

export function settingsService(db: Knex) {
  return {
    async get(tenant: Tenant): Promise<Settings> {
      return resolved(await settingsRepo(db, tenant).read());
    },

    async update(tenant: Tenant, body: SettingsUpdate): Promise<Settings> {
      const values: Record<string, unknown> = {};
      const errors: FieldErrors = {};
      for (const key of KEYS) {
        const value = body[key];
        if (value === undefined) continue;
        const check = SETTING_KEYS[key].check as ((v: unknown) => { value: unknown } | { error: string }) | undefined;
        const checked = check && value !== null ? check(value) : { value };
        if ('error' in checked) errors[key] = [checked.error];
        else values[key] = checked.value;
      }
      if (Object.keys(errors).length > 0) throw ApiError.invalid(errors);
      if (Object.keys(values).length > 0) await settingsRepo(db, tenant).merge(values);
      return this.get(tenant);
    },
  };
}
