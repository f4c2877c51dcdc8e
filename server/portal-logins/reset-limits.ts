/**
 * The limits of "Forgot password": requests per address typed and per IP address in an hour,
 * counted in PostgreSQL (portal_reset_limits, a logged table) so that every server process
 * shares them and a crash does not reset them. Each subject is kept under a keyed digest (the
 * data key's `mac`), never the address or the IP itself. An hour begins at a subject's first
 * request (the tenant's clock) and its count starts again after it.
 */
import type { Knex } from 'knex';
import type { SecretBox } from '../crypto/secrets';
import type { Tenant } from '../kernel/tenant';
import { tenantColumns } from '../db/tenant';

const LIMITS = 'portal_reset_limits';
export const RESET_WINDOW_MINUTES = 60;

export type ResetSubject = { kind: 'address' | 'ip'; value: string };

export function resetLimits(db: Knex, secrets: SecretBox, tenant: Tenant) {
  const subjectOf = ({ kind, value }: ResetSubject) => `${kind}:${secrets.mac(`portal-reset-${kind}`, `${tenant.organizationId}:${tenant.environment}:${value}`)}`;
  return {
    /** Counts one request of `subject` in one statement (two at once both count); answers the count in its hour, this one included. */
    async count(subject: ResetSubject, now: Date): Promise<number> {
      const over = new Date(now.getTime() - RESET_WINDOW_MINUTES * 60_000);
      const { rows } = await db.raw(
        `INSERT INTO ${LIMITS} (organization_id, environment, subject, window_started_at, requests)
              VALUES (:organization_id, :environment, :subject, :now, 1)
         ON CONFLICT (organization_id, environment, subject) DO UPDATE
                 SET requests = CASE WHEN ${LIMITS}.window_started_at <= :over THEN 1 ELSE ${LIMITS}.requests + 1 END,
                     window_started_at = CASE WHEN ${LIMITS}.window_started_at <= :over THEN :now ELSE ${LIMITS}.window_started_at END
           RETURNING requests`,
        { ...tenantColumns(tenant), subject: subjectOf(subject), now, over },
      );
      return Number(rows[0].requests);
    },

    /** Deletes the tenant's counts whose hour is over. */
    async prune(now: Date): Promise<void> {
      await db(LIMITS)
        .where(tenantColumns(tenant))
        .where('window_started_at', '<=', new Date(now.getTime() - RESET_WINDOW_MINUTES * 60_000))
        .delete();
    },
  };
}
