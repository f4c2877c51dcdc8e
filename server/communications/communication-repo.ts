import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns } from '../db/tenant';
import type { CommunicationKind, CommunicationStatus } from './message-kinds';

export const COMMUNICATIONS = 'communications';
export const COMMUNICATION_COLUMNS = [
  'id', 'organization_id', 'environment', 'customer_id', 'debt_account_id', 'channel', 'kind', 'from', 'reply_to', 'to', 'subject', 'headers', 'text',
  'status', 'reason', 'held_until', 'sent_at', 'opt_out_url', 'dedupe_key', 'error', 'created_at', 'updated_at',
].map((column) => `${COMMUNICATIONS}.${column}`);

export type CommunicationReason = components['schemas']['Communication']['reason'];

export interface CommunicationRow {
  id: string;
  organization_id: string;
  environment: Tenant['environment'];
  customer_id: string;
  debt_account_id: string | null;
  /** `mail`: a validation notice's letter (its PDF is for the agency's print vendor). */
  channel: 'email' | 'mail';
  kind: CommunicationKind;
  /** The From as sent; null on rows written before the log kept it. */
  from: string | null;
  reply_to: string | null;
  to: string;
  subject: string;
  /** Message-ID and RFC 8058's headers, as sent. */
  headers: Record<string, string> | null;
  text: string;
  status: CommunicationStatus;
  reason: CommunicationReason | null;
  held_until: Date | null;
  sent_at: Date | null;
  opt_out_url: string | null;
  dedupe_key: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
}

export type NewCommunication = Omit<CommunicationRow, 'id' | 'organization_id' | 'environment' | 'channel' | 'sent_at' | 'error' | 'updated_at'> & { id: string; channel?: CommunicationRow['channel'] };

export interface CommunicationFilters {
  customer_id?: string;
  debt_account_id?: string;
  kind?: CommunicationKind;
  status?: CommunicationStatus;
}

export function communicationRepo(db: Knex, tenant: Tenant) {
  const communications = () => scoped(db, COMMUNICATIONS, tenant);
  return {
    query(filters: CommunicationFilters): Knex.QueryBuilder {
      const query = communications();
      for (const key of ['customer_id', 'debt_account_id', 'kind', 'status'] as const) {
        if (filters[key] !== undefined) query.where(`${COMMUNICATIONS}.${key}`, filters[key]);
      }
      return query;
    },

    async find(id: string, { forUpdate = false } = {}): Promise<CommunicationRow | undefined> {
      const query = communications().where(`${COMMUNICATIONS}.id`, id).first(COMMUNICATION_COLUMNS);
      return (forUpdate ? query.forUpdate() : query) as Promise<CommunicationRow | undefined>;
    },

    /** Writes a message; with a `dedupe_key` already written (a reminder recorded by another process), writes nothing and answers undefined. */
    async insert(values: NewCommunication): Promise<CommunicationRow | undefined> {
      const [row] = await db(COMMUNICATIONS)
        .insert({ channel: 'email', ...values, headers: values.headers && JSON.stringify(values.headers), ...tenantColumns(tenant), updated_at: values.created_at })
        .onConflict(db.raw('(organization_id, environment, dedupe_key)'))
        .ignore()
        .returning(COMMUNICATION_COLUMNS);
      return row as CommunicationRow | undefined;
    },

    async update(id: string, values: Partial<Pick<CommunicationRow, 'status' | 'reason' | 'sent_at' | 'error' | 'updated_at'>>): Promise<void> {
      await communications().where(`${COMMUNICATIONS}.id`, id).update(values);
    },
  };
}
