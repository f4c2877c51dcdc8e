import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { scoped, tenantColumns, UUID } from '../db/tenant';
import type { NoticeData } from './notice-data';

export const VALIDATION_NOTICES = 'validation_notices';
export const VALIDATION_NOTICE_COLUMNS = [
  'id', 'debt_account_id', 'debt_account_ids', 'customer_id', 'language', 'delivery', 'to', 'sent_on', 'validation_period_ends_on', 'amount_due',
  'esign_consent', 'procedure_1006_42c', 'communication_id', 'file_key', 'file_size', 'file_sha256', 'data', 'created_at',
].map((column) => `${VALIDATION_NOTICES}.${column}`);

type Schemas = components['schemas'];

export interface ValidationNoticeRow {
  id: string;
  debt_account_id: string;
  debt_account_ids: string[];
  customer_id: string;
  language: Schemas['ValidationNotice']['language'];
  delivery: Schemas['ValidationNotice']['delivery'];
  to: string;
  sent_on: string;
  validation_period_ends_on: string;
  /** bigint: text from pg. */
  amount_due: string | number;
  esign_consent: Schemas['ElectronicConsent'] | null;
  procedure_1006_42c: boolean;
  communication_id: string;
  file_key: string;
  file_size: number;
  file_sha256: string;
  data: NoticeData;
  created_at: Date;
}

export function validationNoticeToApi(row: ValidationNoticeRow): Schemas['ValidationNotice'] {
  return {
    id: row.id,
    debt_account_id: row.debt_account_id,
    debt_account_ids: row.debt_account_ids,
    customer_id: row.customer_id,
    language: row.language,
    delivery: row.delivery,
    to: row.to,
    sent_on: row.sent_on,
    validation_period_ends_on: row.validation_period_ends_on,
    amount_due: Number(row.amount_due),
    esign_consent: row.esign_consent,
    procedure_1006_42c: row.procedure_1006_42c,
    communication_id: row.communication_id,
    file: { content_type: 'application/pdf', size: row.file_size, sha256: row.file_sha256 },
    created_at: row.created_at.toISOString(),
  };
}

export function validationNoticeRepo(db: Knex, tenant: Tenant) {
  const notices = () => scoped(db, VALIDATION_NOTICES, tenant);
  return {
    /** The notices that cover an account: asked for it, or for its parent covering it. */
    ofAccount: (accountId: string): Knex.QueryBuilder =>
      notices().where((where) => where.where(`${VALIDATION_NOTICES}.debt_account_id`, accountId).orWhereRaw('?::uuid = ANY(validation_notices.debt_account_ids)', [accountId])),

    async find(id: string): Promise<ValidationNoticeRow | undefined> {
      if (!UUID.test(id)) return undefined;
      return notices().where(`${VALIDATION_NOTICES}.id`, id).first(VALIDATION_NOTICE_COLUMNS);
    },

    async latestOf(accountId: string): Promise<ValidationNoticeRow | undefined> {
      return this.ofAccount(accountId)
        .orderBy([
          { column: `${VALIDATION_NOTICES}.created_at`, order: 'desc' },
          { column: `${VALIDATION_NOTICES}.id`, order: 'desc' },
        ])
        .first(VALIDATION_NOTICE_COLUMNS);
    },

    async insert(values: Omit<ValidationNoticeRow, 'id'>): Promise<ValidationNoticeRow> {
      const [row] = await db(VALIDATION_NOTICES)
        .insert({
          ...values,
          ...tenantColumns(tenant),
          esign_consent: values.esign_consent ? JSON.stringify(values.esign_consent) : null,
          data: JSON.stringify(values.data),
        })
        .returning(VALIDATION_NOTICE_COLUMNS.map((column) => column.slice(VALIDATION_NOTICES.length + 1)));
      return row as ValidationNoticeRow;
    },
  };
}
