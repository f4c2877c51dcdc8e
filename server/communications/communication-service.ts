/** Reading the communications log: one tenant's messages, newest first, by filter or by id. */
import type { Knex } from 'knex';
import type { components } from '../../generated/schema';
import type { Tenant } from '../kernel/tenant';
import { ApiError } from '../kernel/errors';
import { listPage, type Listed } from '../http/listing';
import type { PageRequest } from '../http/pagination';
import { historyOf } from '../customers/email-opt-outs';
import { communicationToApi } from './communication-mapper';
import { COMMUNICATION_COLUMNS, communicationRepo, COMMUNICATIONS, type CommunicationFilters, type CommunicationRow } from './communication-repo';

type Communication = components['schemas']['Communication'];

export function communicationService(db: Knex) {
  return {
    list(tenant: Tenant, filters: CommunicationFilters, page: PageRequest): Promise<Listed<Communication>> {
      return listPage<CommunicationRow, Communication>(communicationRepo(db, tenant).query(filters), page, { columns: COMMUNICATION_COLUMNS, table: COMMUNICATIONS, order: 'desc' }, (rows) =>
        rows.map(communicationToApi),
      );
    },

    /** The append-only history of one address's opt-out state, oldest first. */
    async optOutHistory(tenant: Tenant, email: string): Promise<components['schemas']['EmailOptOutChange'][]> {
      return (await historyOf(db, tenant, email)).map((row) => ({
        email: row.address,
        email_preference: row.opted_out ? 'opted_out' : 'allowed',
        changed_by: row.changed_by,
        customer_id: row.customer_id,
        changed_at: row.changed_at.toISOString(),
      }));
    },

    async find(tenant: Tenant, id: string): Promise<Communication> {
      const row = await communicationRepo(db, tenant).find(id);
      if (!row) throw ApiError.notFound('Communication');
      return communicationToApi(row);
    },
  };
}
