/** The processor configuration of each organization and environment: the SQL. */
import type { Knex } from 'knex';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';

export const PAYMENT_PROCESSORS = 'payment_processors';

export type ProcessorName = 'sandbox' | 'stripe' | 'authorize_net';

export interface ProcessorRow {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  processor: ProcessorName;
  /** The credentials as one JSON object, sealed with the data key (SecretBox). */
  credentials_sealed: string;
  credentials_last4: Record<string, string>;
  rate_limit_per_second: number;
  configured_at: Date;
}

const COLUMNS = ['id', 'organization_id', 'environment', 'processor', 'credentials_sealed', 'credentials_last4', 'rate_limit_per_second', 'configured_at'];

export type ProcessorValues = Pick<ProcessorRow, 'processor' | 'credentials_sealed' | 'credentials_last4' | 'rate_limit_per_second'>;

export function processorRepo(db: Knex, tenant: Tenant) {
  return {
    async find(): Promise<ProcessorRow | undefined> {
      return db(PAYMENT_PROCESSORS).where(tenantColumns(tenant)).first(COLUMNS);
    },

    /** Replaces the tenant's configuration; its id (and so its webhook URL) stays. */
    async save(values: ProcessorValues): Promise<ProcessorRow> {
      const [row] = await db(PAYMENT_PROCESSORS)
        .insert({ ...tenantColumns(tenant), ...values, credentials_last4: JSON.stringify(values.credentials_last4), configured_at: db.fn.now() })
        .onConflict(['organization_id', 'environment'])
        .merge(['processor', 'credentials_sealed', 'credentials_last4', 'rate_limit_per_second', 'configured_at'])
        .returning(COLUMNS);
      return row as ProcessorRow;
    },
  };
}

/** A configuration by its id alone: the one a processor's webhook names in its URL. */
export async function processorById(db: Knex, id: string): Promise<ProcessorRow | undefined> {
  return db(PAYMENT_PROCESSORS).where({ id }).first(COLUMNS);
}

/** Every configuration of one of these processors, across organizations and environments (the scheduled reads of processors). */
export async function processorsNamed(db: Knex, names: ProcessorName[]): Promise<ProcessorRow[]> {
  return db(PAYMENT_PROCESSORS).whereIn('processor', names).orderBy('id').select(COLUMNS);
}
