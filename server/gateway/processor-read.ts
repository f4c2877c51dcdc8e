/**
 * The read model of a tenant's processor, unsealed, for those that move money through it (the
 * gateways) and those that check its webhooks. Asked for every charge, so each process keeps
 * what it read for a few seconds: a change made through this process is seen at once, one made
 * through another process within PROCESSOR_CACHE_MS.
 */
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { processorById, processorRepo, processorsNamed, type ProcessorName, type ProcessorRow } from './processor-repo';

export interface Processor {
  /** The configuration's id: its webhook URL's last segment, and the key of what is kept per processor account. */
  id: string;
  name: ProcessorName;
  credentials: Record<string, string>;
  rateLimitPerSecond: number;
  configuredAt: Date;
  organizationId: string;
  environment: Tenant['environment'];
}

const PROCESSOR_CACHE_MS = 5_000;
const cache = new Map<string, { processor: Processor | undefined; until: number }>();
const keyOf = (tenant: Pick<Tenant, 'organizationId' | 'environment'>) => `${tenant.organizationId}:${tenant.environment}`;

function unsealed(row: ProcessorRow, secrets: SecretBox): Processor {
  return {
    id: row.id,
    name: row.processor,
    credentials: JSON.parse(secrets.decrypt(row.credentials_sealed)) as Record<string, string>,
    rateLimitPerSecond: row.rate_limit_per_second,
    configuredAt: row.configured_at,
    organizationId: row.organization_id,
    environment: row.environment,
  };
}

/** The tenant's saved processor, or undefined when none was saved. */
export async function processorOf(deps: { db: Knex; secrets: SecretBox }, tenant: Tenant): Promise<Processor | undefined> {
  const key = keyOf(tenant);
  const kept = cache.get(key);
  if (kept && kept.until > Date.now()) return kept.processor;
  const row = await processorRepo(deps.db, tenant).find();
  const processor = row && unsealed(row, deps.secrets);
  cache.set(key, { processor, until: Date.now() + PROCESSOR_CACHE_MS });
  return processor;
}

/** The processor whose webhook URL names `id` (not cached: a webhook is rare beside charges). */
export async function processorWithId(deps: { db: Knex; secrets: SecretBox }, id: string): Promise<Processor | undefined> {
  const row = await processorById(deps.db, id);
  return row && unsealed(row, deps.secrets);
}

/** Every saved configuration of these processors, unsealed (for the jobs that read each processor account's reports). */
export async function processorsOf(deps: { db: Knex; secrets: SecretBox }, names: ProcessorName[]): Promise<Processor[]> {
  return (await processorsNamed(deps.db, names)).map((row) => unsealed(row, deps.secrets));
}

/** Forgets what this process read of the tenant's processor (it was just changed). */
export function forgetProcessor(tenant: Pick<Tenant, 'organizationId' | 'environment'>): void {
  cache.delete(keyOf(tenant));
}
